package io.frameecho.server.impl.connection;

import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.impl.shared.Ticker;

import java.util.concurrent.TimeUnit;

/**
 * A connection's timers: {@code idleTimeoutMs}, {@code frameTimeoutMs} (a started frame not completed) and
 * {@code writeStallTimeoutMs} (responses not read, or a close that cannot flush), each off at 0, and during shutdown
 * the wait for a first request. Each that runs out sends one {@link Events event}; the connection decides. Timers
 * are re-armed when they fire rather than reset per request, so a busy connection costs a clock read per frame.
 */
final class ConnectionTimers {

  /** What the timers tell their connection when they run out. */
  interface Events {

    /** No complete request for {@code idleMs}; false when the connection is busy all the same, and the timer starts over. */
    boolean idle(long idleMs);

    /** A frame started {@code elapsedMs} ago, not counting time the server paused reading, is not complete. */
    void frameTimedOut(long elapsedMs);

    /** No response byte was taken for {@code writeStallTimeoutMs} since the queue filled or a close began to flush. */
    void writeStalled();

    /** The wait {@link #awaitFirstRequest} began has ended. */
    void firstRequestGraceOver();

    /** Response bytes queued and not yet taken by the kernel: fewer since the last look means the client reads. */
    long pendingWriteBytes();
  }

  private final Ticker ticker;
  /** Read where used, so a connection keeps no copy. */
  private final FrameEchoOptions options;
  private final Events events;

  private long lastRequestNanos;
  private long frameStartedNanos;
  /** Time the server kept reading paused since the current frame started: not the client's slowness. */
  private long frameNanosPaused;
  private long pausedSinceNanos = -1;
  /** Pending response bytes at the last check: fewer since means progress. */
  private long pendingAtWriteCheck;
  private long writeProgressNanos;
  /** The write queue is full, or a close waits to flush, and it has not drained since. */
  private boolean writeWaiting;
  private long idleTimer = -1;
  private long frameTimer = -1;
  private long writeTimer = -1;
  private long firstRequestTimer = -1;

  ConnectionTimers(Ticker ticker, FrameEchoOptions options, Events events) {
    this.ticker = ticker;
    this.options = options;
    this.events = events;
  }

  void start() {
    long idleTimeoutMs = options.getIdleTimeoutMs();
    if (idleTimeoutMs > 0) {
      lastRequestNanos = ticker.nanoTime();
      idleTimer = ticker.schedule(idleTimeoutMs, this::onIdleTimer);
    }
  }

  /** During shutdown, before a first request: waits out the rest of {@code graceMs} from {@code startedNanos}; true if it waits. */
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
   * How long the client has been sent nothing while responses wait: the lesser of the kernel's {@code msSinceDataSent}
   * and this clock's own look; -1 where the kernel cannot tell, since Netty's count alone cannot tell a slow reader
   * from one that reads nothing.
   */
  long msSentNothing(long msSinceDataSent) {
    if (msSinceDataSent < 0 || !writeWaiting) {
      return Math.min(msSinceDataSent, 0);
    }
    long now = ticker.nanoTime();
    noteWriteProgress(now);
    return Math.min(msSinceDataSent, TimeUnit.NANOSECONDS.toMillis(now - writeProgressNanos));
  }

  /** A whole request: the idle clock starts over, if it runs (the timer is armed only with an idle timeout). */
  void requestArrived() {
    if (idleTimer >= 0) {
      lastRequestNanos = ticker.nanoTime();
    }
  }

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

  /** Until reading resumes, the frame timer does not run against the client. */
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

  /** The write queue is full, or a close waits to flush: the write-stall timer starts unless running. */
  void writeWaiting() {
    if (!writeWaiting) {
      writeWaiting = true;
      pendingAtWriteCheck = events.pendingWriteBytes();
      writeProgressNanos = ticker.nanoTime();
    }
    if (writeTimer < 0 && options.getWriteStallTimeoutMs() > 0) {
      writeTimer = ticker.schedule(writeCheckMs(), this::onWriteStall);
    }
  }

  private void noteWriteProgress(long now) {
    long pending = events.pendingWriteBytes();
    if (pending < pendingAtWriteCheck) {
      pendingAtWriteCheck = pending;
      writeProgressNanos = now;
    }
  }

  /**
   * Four checks per timeout: the kernel takes a share just after the queue fills, which one check per timeout would
   * count as progress, delaying the close of a client that reads nothing to two timeouts.
   */
  private long writeCheckMs() {
    return Math.max(1, options.getWriteStallTimeoutMs() / 4);
  }

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
    long paused = frameNanosPaused + (pausedSinceNanos >= 0 ? now - pausedSinceNanos : 0);
    long elapsedMs = TimeUnit.NANOSECONDS.toMillis(now - frameStartedNanos - paused);
    if (elapsedMs < frameTimeoutMs) {
      frameTimer = ticker.schedule(frameTimeoutMs - elapsedMs, this::onFrameTimer);
      return;
    }
    events.frameTimedOut(elapsedMs);
  }

  /** Only no progress at all is a stall: a client that reads, however slowly, keeps its connection. */
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

  void cancelAll() {
    for (long id : new long[] {idleTimer, frameTimer, writeTimer, firstRequestTimer}) {
      if (id >= 0) {
        ticker.cancel(id);
      }
    }
    idleTimer = frameTimer = writeTimer = firstRequestTimer = -1;
  }
}
