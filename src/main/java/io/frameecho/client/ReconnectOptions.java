package io.frameecho.client;

/**
 * Exponential backoff for a {@link FrameClient} re-sending idempotent requests ({@link FrameClient#resendIdempotent})
 * after the server drops a connection with requests unanswered: the first attempt is immediate, later ones wait from
 * {@code firstDelayMs} doubling up to {@code maxDelayMs}, and none starts after {@code deadlineMs}. An attempt fails
 * if the connect fails or the connection closes before answering anything.
 *
 * @param firstDelayMs the wait after the first failed attempt in milliseconds, positive
 * @param maxDelayMs   the longest wait between attempts, at least {@code firstDelayMs}
 * @param deadlineMs   how long after the close attempts may start; 0 for a single attempt
 */
public record ReconnectOptions(long firstDelayMs, long maxDelayMs, long deadlineMs) {

  /** Default first wait; a restarting server is often listening again at once. */
  public static final long DEFAULT_FIRST_DELAY_MS = 50;
  /** Default longest wait between attempts. */
  public static final long DEFAULT_MAX_DELAY_MS = 1_000;
  /** Default deadline: how long a restart may take before the requests fail. */
  public static final long DEFAULT_DEADLINE_MS = 10_000;
  /** The defaults: 50 ms doubling up to 1 s between tries, for up to 10 s. */
  public static final ReconnectOptions DEFAULTS =
    new ReconnectOptions(DEFAULT_FIRST_DELAY_MS, DEFAULT_MAX_DELAY_MS, DEFAULT_DEADLINE_MS);

  /** Rejects out-of-range values, naming the field. */
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

  /** The wait before attempt {@code attempt}, counting from 1. */
  long delayBefore(int attempt) {
    if (attempt <= 1) {
      return 0;
    }
    long delay = firstDelayMs;
    for (int i = 2; i < attempt && delay < maxDelayMs; i++) {
      // Capped before doubling, so it cannot overflow.
      delay = delay > maxDelayMs / 2 ? maxDelayMs : delay * 2;
    }
    return delay;
  }
}
