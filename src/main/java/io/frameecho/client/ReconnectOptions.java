package io.frameecho.client;

/**
 * How a {@link FrameClient} that re-sends idempotent requests ({@link FrameClient#resendIdempotent}) reconnects when
 * the server closes or resets a connection with requests unanswered: the first try at once, then a wait of
 * {@code firstDelayMs} before the next, doubling after each failed try up to {@code maxDelayMs}; no try starts later
 * than {@code deadlineMs} after the close, and when the last fails the requests fail. A try fails when the connect
 * fails (refused, a TLS handshake that fails) or when its connection closes before answering anything (a server
 * still shutting down, or over its limits); a connection that answers a request ends the series.
 *
 * @param firstDelayMs the wait after the first failed try, in milliseconds: positive (default
 *                     {@value #DEFAULT_FIRST_DELAY_MS})
 * @param maxDelayMs   the longest wait between tries: at least {@code firstDelayMs} (default {@value #DEFAULT_MAX_DELAY_MS})
 * @param deadlineMs   how long after the close tries may start: 0 (one try) or more (default
 *                     {@value #DEFAULT_DEADLINE_MS}); a try under way when it passes runs to its end, bounded by the
 *                     connect and TLS handshake timeouts of the client's {@code NetClientOptions}
 */
public record ReconnectOptions(long firstDelayMs, long maxDelayMs, long deadlineMs) {

  /** The wait after the first failed try: a server that restarts is often listening again at once. */
  public static final long DEFAULT_FIRST_DELAY_MS = 50;
  /** The longest wait between tries: a restarted server is found within a second of its listening. */
  public static final long DEFAULT_MAX_DELAY_MS = 1_000;
  /** How long a restart may take before the requests fail. */
  public static final long DEFAULT_DEADLINE_MS = 10_000;
  /** The defaults: 50 ms doubling up to 1 s between tries, for up to 10 s. */
  public static final ReconnectOptions DEFAULTS =
    new ReconnectOptions(DEFAULT_FIRST_DELAY_MS, DEFAULT_MAX_DELAY_MS, DEFAULT_DEADLINE_MS);

  /** Checks the values: each names its field when it is out of range. */
  public ReconnectOptions {
    if (firstDelayMs <= 0) {
      throw new IllegalArgumentException("firstDelayMs must be positive: " + firstDelayMs);
    }
    if (maxDelayMs < firstDelayMs) {
      throw new IllegalArgumentException("maxDelayMs must be at least firstDelayMs (" + firstDelayMs + "): " + maxDelayMs);
    }
    if (deadlineMs < 0) {
      throw new IllegalArgumentException("deadlineMs must be 0 (one try) or positive: " + deadlineMs);
    }
  }

  /** The wait before try {@code attempt} (1 is the first): none, then {@code firstDelayMs} doubling up to {@code maxDelayMs}. */
  long delayBefore(int attempt) {
    if (attempt <= 1) {
      return 0;
    }
    long delay = firstDelayMs;
    for (int i = 2; i < attempt && delay < maxDelayMs; i++) {
      // Capped before it is doubled past maxDelayMs: it cannot overflow.
      delay = delay > maxDelayMs / 2 ? maxDelayMs : delay * 2;
    }
    return delay;
  }
}
