package io.frameecho.server.impl.connection;

import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.impl.shared.Ticker;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A connection's clocks, the first three off at 0: {@code idleTimeoutMs} (no complete request), {@code
 * frameTimeoutMs} (a started frame not complete: slowloris) and {@code writeStallTimeoutMs} (responses
 * not read, or a close that cannot flush); and, once shutdown has begun, the wait for a first request. The
 * connection tells them what happens; each that runs out sends it one {@link Events event}, and the connection
 * decides. A timer is re-armed rather than reset per request, so a busy connection costs one clock read per frame,
 * not a timer; none is armed at accept unless {@code idleTimeoutMs} is on. Time comes from a {@link Ticker}: Vert.x's
 * timers, or a virtual clock in tests.
 */
final class ConnectionTimers {

  /** What the clocks tell their connection when they run out. */
  interface Events {

    /**
     * No complete request for {@code idleMs} (at least {@code idleTimeoutMs}). Returns false when the
     * connection is busy all the same (answers awaited, reading paused, a frame under way): the clock then
     * starts over.
     */
    boolean idle(long idleMs);

    /** A frame started {@code elapsedMs} ago (not counting time the server paused reading) is not complete. */
    void frameTimedOut(long elapsedMs);

    /** No response byte was taken for {@code writeStallTimeoutMs} since the queue filled, or a close began to flush. */
    void writeStalled();

    /** The wait {@link #awaitFirstRequest} began has ended. */
    void firstRequestGraceOver();
  }

  private final Ticker ticker;
  /** The three timeouts: the server's options, read where used (a connection keeps no copy). */
  private final FrameEchoOptions options;
  /** The socket's response bytes not yet taken by the client. */
  private final LongSupplier pendingWriteBytes;
  private final Events events;

  private long lastRequestNanos;
  private long frameStartedNanos;
  /** Time the server itself kept reading paused since the current frame started (not the client's slowness). */
  private long frameNanosPaused;
  private long pausedSinceNanos = -1;
  /** Response bytes pending at the write-stall clock's last check: fewer since means progress. */
  private long pendingAtWriteCheck;
  /** When a look at the pending bytes last saw progress (or the write queue filled). */
  private long writeProgressNanos;
  /** The write queue is full, or a close waits to flush, and has not drained since. */
  private boolean writeWaiting;
  private long idleTimer = -1;
  private long frameTimer = -1;
  private long writeTimer = -1;
  private long firstRequestTimer = -1;

  ConnectionTimers(Ticker ticker, FrameEchoOptions options,
                   LongSupplier pendingWriteBytes, Events events) {
    this.ticker = ticker;
    this.options = options;
    this.pendingWriteBytes = pendingWriteBytes;
    this.events = events;
  }

  void start() {
    long idleTimeoutMs = options.getIdleTimeoutMs();
    if (idleTimeoutMs > 0) {
      lastRequestNanos = ticker.nanoTime();
      idleTimer = ticker.schedule(idleTimeoutMs, this::onIdleTimer);
    }
  }

  /**
   * Shutdown began before the connection's first request: if it started (at {@code startedNanos}) less than {@code
   * graceMs} ago, it waits the rest of that time ({@link Events#firstRequestGraceOver}), and this returns true.
   */
  boolean awaitFirstRequest(long graceMs, long startedNanos) {
    if (firstRequestTimer >= 0) {
      return true;
    }
    long leftMs = graceMs - TimeUnit.NANOSECONDS.toMillis(ticker.nanoTime() - startedNanos);
    if (leftMs <= 0) {
      return false;
    }
    firstRequestTimer = ticker.schedule(leftMs, () -> {
      firstRequestTimer = -1;
      events.firstRequestGraceOver();
    });
    return true;
  }

  /**
   * How long the client has been sent nothing while its responses wait, for the budget's cut of a client that reads
   * no response: the least of {@code msSinceDataSent} (the kernel's TCP_INFO: it grows while the client reads nothing,
   * and between a slow reader's window updates, every 2.6 s at 50 KB/s over loopback, measured) and this clock's own
   * look; -1 where the kernel cannot tell (Netty's own count moves only once the kernel's buffer has drained a good part,
   * so on it a slow reader looks like one that reads nothing).
   */
  long msSentNothing(long msSinceDataSent) {
    return msSinceDataSent < 0 ? -1 : Math.min(msSinceDataSent, msWithoutWriteProgress());
  }

  /** A request frame is complete: the idle clock restarts. */
  void requestArrived() {
    if (options.getIdleTimeoutMs() > 0) {
      lastRequestNanos = ticker.nanoTime();
    }
  }

  /** The first bytes of a frame have arrived. */
  void frameStarted() {
    long frameTimeoutMs = options.getFrameTimeoutMs();
    if (frameTimeoutMs > 0) {
      frameStartedNanos = ticker.nanoTime();
      frameNanosPaused = 0;
      if (pausedSinceNanos >= 0) {
        pausedSinceNanos = frameStartedNanos;
      }
      if (frameTimer < 0) {
        frameTimer = ticker.schedule(frameTimeoutMs, this::onFrameTimer);
      }
    }
  }

  /** The server paused reading, for whatever reason: until it resumes, the frame clock does not run against the client. */
  void readingPaused() {
    if (pausedSinceNanos < 0) {
      pausedSinceNanos = ticker.nanoTime();
    }
  }

  void readingResumed() {
    if (pausedSinceNanos >= 0) {
      frameNanosPaused += ticker.nanoTime() - pausedSinceNanos;
      pausedSinceNanos = -1;
    }
  }

  /** The write queue is full, or a close waits to flush: the write-stall clock starts, unless running. */
  void writeWaiting() {
    if (!writeWaiting) {
      writeWaiting = true;
      pendingAtWriteCheck = pendingWriteBytes.getAsLong();
      writeProgressNanos = ticker.nanoTime();
    }
    if (writeTimer < 0 && options.getWriteStallTimeoutMs() > 0) {
      writeTimer = ticker.schedule(writeCheckMs(), this::onWriteStall);
    }
  }

  /**
   * How long the client has taken no byte of the responses queued, looking now; 0 unless the write queue is full or a
   * close waits to flush. Netty's count moves only when the kernel takes more, so this is coarse: the kernel's own
   * buffer may drain for a while first.
   */
  long msWithoutWriteProgress() {
    if (!writeWaiting) {
      return 0;
    }
    long now = ticker.nanoTime();
    noteWriteProgress(now);
    return TimeUnit.NANOSECONDS.toMillis(now - writeProgressNanos);
  }

  private void noteWriteProgress(long now) {
    long pending = pendingWriteBytes.getAsLong();
    if (pending < pendingAtWriteCheck) {
      pendingAtWriteCheck = pending;
      writeProgressNanos = now;
    }
  }

  /**
   * The write-stall clock looks four times per timeout: the kernel takes its share of a queue just after it fills, and
   * checked once per timeout that would count as progress, so a client that reads nothing would be closed only after
   * two timeouts. Four looks close it within a quarter more than one.
   */
  private long writeCheckMs() {
    return Math.max(1, options.getWriteStallTimeoutMs() / 4);
  }

  /** The write queue drained: the write-stall clock stops. */
  void writeDrained() {
    writeWaiting = false;
    if (writeTimer >= 0) {
      ticker.cancel(writeTimer);
      writeTimer = -1;
    }
  }

  private void onIdleTimer() {
    idleTimer = -1;
    long idleTimeoutMs = options.getIdleTimeoutMs();
    long idleMs = TimeUnit.NANOSECONDS.toMillis(ticker.nanoTime() - lastRequestNanos);
    if (idleMs < idleTimeoutMs) {
      idleTimer = ticker.schedule(idleTimeoutMs - idleMs, this::onIdleTimer);
    } else if (!events.idle(idleMs)) {
      idleTimer = ticker.schedule(idleTimeoutMs, this::onIdleTimer);
    }
  }

  private void onFrameTimer() {
    frameTimer = -1;
    long frameTimeoutMs = options.getFrameTimeoutMs();
    long now = ticker.nanoTime();
    // Time the server kept reading paused is its own choice, not the client's slowness: it does not count.
    long paused = frameNanosPaused + (pausedSinceNanos >= 0 ? now - pausedSinceNanos : 0);
    long elapsedMs = TimeUnit.NANOSECONDS.toMillis(now - frameStartedNanos - paused);
    if (elapsedMs < frameTimeoutMs) {
      frameTimer = ticker.schedule(frameTimeoutMs - elapsedMs, this::onFrameTimer);
      return;
    }
    events.frameTimedOut(elapsedMs);
  }

  /** A stall is no progress for {@code writeStallTimeoutMs}: a client that reads, however slowly, keeps its connection. */
  private void onWriteStall() {
    writeTimer = -1;
    long writeStallTimeoutMs = options.getWriteStallTimeoutMs();
    long now = ticker.nanoTime();
    noteWriteProgress(now);
    long stalledMs = TimeUnit.NANOSECONDS.toMillis(now - writeProgressNanos);
    if (stalledMs < writeStallTimeoutMs) {
      writeTimer = ticker.schedule(Math.min(writeCheckMs(), writeStallTimeoutMs - stalledMs), this::onWriteStall);
      return;
    }
    events.writeStalled();
  }

  long writeStallTimeoutMs() {
    return options.getWriteStallTimeoutMs();
  }

  void cancelAll() {
    for (long id : new long[] {idleTimer, frameTimer, writeTimer, firstRequestTimer}) {
      if (id >= 0) {
        ticker.cancel(id);
      }
    }
    idleTimer = frameTimer = writeTimer = firstRequestTimer = -1;
  }
}
