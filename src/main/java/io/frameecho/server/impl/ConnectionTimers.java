package io.frameecho.server.impl;

import io.frameecho.server.FrameEchoOptions;
import io.vertx.core.Vertx;

import java.util.concurrent.TimeUnit;

/**
 * A connection's three clocks, each off at 0: {@code idleTimeoutMs} (no complete request), {@code
 * frameTimeoutMs} (a started frame not complete: slowloris) and {@code writeStallTimeoutMs} (responses
 * not read, or a close that cannot flush). Each timer is re-armed rather than reset per request, so a busy
 * connection costs one clock read per frame, not a timer.
 */
final class ConnectionTimers {

  /** What the clocks ask of their connection, and tell it. */
  interface Owner {
    /** The connection has decided to close; no timer closes it again, but the write stall. */
    boolean closing();

    /** The connection is not idle even without requests: answers awaited, reading paused, a frame started. */
    boolean busy();

    /** A frame has started and is not complete. */
    boolean insideFrame();

    void idleTimedOut(long idleMs);

    void frameTimedOut(long elapsedMs);

    /** Responses went unread for {@code writeStallTimeoutMs}, or a close could not flush in that time. */
    void writeStalled();

    /** Whether the write stall is still there: the write queue is full, or the close has not flushed. */
    boolean stillStalled();

    /** Response bytes queued and not yet taken by the client. */
    long pendingWriteBytes();
  }

  private final Vertx vertx;
  private final long idleTimeoutMs;
  private final long frameTimeoutMs;
  private final long writeStallTimeoutMs;
  private final Owner owner;

  private long lastRequestNanos;
  private long frameStartedNanos;
  /** Time the server itself kept reading paused since the current frame started (not the client's slowness). */
  private long frameNanosPaused;
  private long pausedSinceNanos = -1;
  /** Response bytes pending when the write-stall clock was last armed: fewer since means progress. */
  private long pendingAtWriteCheck;
  private long idleTimer = -1;
  private long frameTimer = -1;
  private long writeTimer = -1;

  ConnectionTimers(Vertx vertx, FrameEchoOptions options, Owner owner) {
    this.vertx = vertx;
    this.idleTimeoutMs = options.getIdleTimeoutMs();
    this.frameTimeoutMs = options.getFrameTimeoutMs();
    this.writeStallTimeoutMs = options.getWriteStallTimeoutMs();
    this.owner = owner;
  }

  void start() {
    if (idleTimeoutMs > 0) {
      lastRequestNanos = System.nanoTime();
      idleTimer = vertx.setTimer(idleTimeoutMs, this::onIdleTimer);
    }
  }

  /** A request frame is complete: the idle clock restarts. */
  void requestArrived() {
    if (idleTimeoutMs > 0) {
      lastRequestNanos = System.nanoTime();
    }
  }

  /** The first bytes of a frame have arrived. */
  void frameStarted() {
    if (frameTimeoutMs > 0) {
      frameStartedNanos = System.nanoTime();
      frameNanosPaused = 0;
      if (pausedSinceNanos >= 0) {
        pausedSinceNanos = frameStartedNanos;
      }
      if (frameTimer < 0) {
        frameTimer = vertx.setTimer(frameTimeoutMs, this::onFrameTimer);
      }
    }
  }

  /** The server paused reading: until it resumes, the frame clock does not run against the client. */
  void readingPaused() {
    if (pausedSinceNanos < 0) {
      pausedSinceNanos = System.nanoTime();
    }
  }

  void readingResumed() {
    if (pausedSinceNanos >= 0) {
      frameNanosPaused += System.nanoTime() - pausedSinceNanos;
      pausedSinceNanos = -1;
    }
  }

  /** The write queue is full, or a close waits to flush: the write-stall clock starts, unless running. */
  void writeWaiting() {
    if (writeTimer < 0 && writeStallTimeoutMs > 0) {
      pendingAtWriteCheck = owner.pendingWriteBytes();
      writeTimer = vertx.setTimer(writeStallTimeoutMs, this::onWriteStall);
    }
  }

  /** The write queue drained: the write-stall clock stops. */
  void writeDrained() {
    if (writeTimer >= 0) {
      vertx.cancelTimer(writeTimer);
      writeTimer = -1;
    }
  }

  private void onIdleTimer(long id) {
    idleTimer = -1;
    if (owner.closing()) {
      return;
    }
    long idleMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastRequestNanos);
    boolean busy = owner.busy();
    if (busy || idleMs < idleTimeoutMs) {
      idleTimer = vertx.setTimer(busy ? idleTimeoutMs : idleTimeoutMs - idleMs, this::onIdleTimer);
      return;
    }
    owner.idleTimedOut(idleMs);
  }

  private void onFrameTimer(long id) {
    frameTimer = -1;
    if (owner.closing() || !owner.insideFrame()) {
      return;
    }
    long now = System.nanoTime();
    // Time the server kept reading paused is its own choice, not the client's slowness: it does not count.
    long paused = frameNanosPaused + (pausedSinceNanos >= 0 ? now - pausedSinceNanos : 0);
    long elapsedMs = TimeUnit.NANOSECONDS.toMillis(now - frameStartedNanos - paused);
    if (elapsedMs < frameTimeoutMs) {
      frameTimer = vertx.setTimer(frameTimeoutMs - elapsedMs, this::onFrameTimer);
      return;
    }
    owner.frameTimedOut(elapsedMs);
  }

  /** A stall is no progress: a client that reads, however slowly, keeps its connection. */
  private void onWriteStall(long id) {
    writeTimer = -1;
    if (!owner.stillStalled()) {
      return;
    }
    long pending = owner.pendingWriteBytes();
    if (pending < pendingAtWriteCheck) {
      pendingAtWriteCheck = pending;
      writeTimer = vertx.setTimer(writeStallTimeoutMs, this::onWriteStall);
      return;
    }
    owner.writeStalled();
  }

  long writeStallTimeoutMs() {
    return writeStallTimeoutMs;
  }

  void cancelAll() {
    for (long id : new long[] {idleTimer, frameTimer, writeTimer}) {
      if (id >= 0) {
        vertx.cancelTimer(id);
      }
    }
    idleTimer = frameTimer = writeTimer = -1;
  }
}
