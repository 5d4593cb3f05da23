package io.frameecho.server.impl.connection;

import io.frameecho.protocol.FrameParser;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.impl.connection.ReadGate.Reason;
import io.frameecho.server.impl.shared.BudgetAccount;

/**
 * The book's {@code want_read} at work: a {@link ReadGate} whose reasons turn into the parser's pause and resume,
 * with what a pause means elsewhere: the frame clock stops (time the server keeps a frame from being read is not the
 * client's), the write-stall clock starts for a full write queue, the budget learns that the server, not the client,
 * holds the frame, and the paused-connections meter moves. On the connection's event loop.
 */
final class Reading extends ReadGate {

  private FrameParser parser;
  private FrameEchoMetrics metrics;
  private ConnectionTimers timers;
  private BudgetAccount account;
  private ConnectionLog log;

  /** Once, when the connection builds its rooms. */
  void wire(FrameParser parser, FrameEchoMetrics metrics, ConnectionTimers timers, BudgetAccount account, ConnectionLog log) {
    this.log = log;
    this.parser = parser;
    this.metrics = metrics;
    this.timers = timers;
    this.account = account;
  }

  void pauseFor(Reason reason) {
    boolean wasOpen = isOpen();
    boolean serverPaused = isPausedForOtherThan(Reason.OVER_BUFFER_BUDGET);
    if (!pause(reason)) {
      return;
    }
    log.readingPaused(reason, wasOpen);
    if (wasOpen) {
      parser.pause();
      metrics.readingPaused();
      timers.readingPaused();
    }
    if (!serverPaused && reason != Reason.OVER_BUFFER_BUDGET) {
      account.serverPaused(true);
    }
    if (reason == Reason.WRITE_QUEUE_FULL) {
      timers.writeWaiting();
    }
  }

  /**
   * Clears {@code reason}; true when reading starts again, the parser having handed over the frames it held while
   * paused (the connection then settles them, and its end of input if that came).
   */
  boolean resumeFrom(Reason reason) {
    boolean serverPaused = isPausedForOtherThan(Reason.OVER_BUFFER_BUDGET);
    boolean stood = isPausedFor(reason);
    boolean opened = resume(reason);
    if (stood && !isShut()) {
      log.readingResumed(reason, opened);
    }
    if (serverPaused && !isPausedForOtherThan(Reason.OVER_BUFFER_BUDGET)) {
      account.serverPaused(false);
    }
    if (!opened) {
      return false;
    }
    timers.readingResumed();
    metrics.readingResumed();
    if (isShut()) {
      return false;
    }
    parser.resume();
    return true;
  }

  /** The connection is closing: reading stops for good. */
  void stopForGood() {
    shut();
    parser.pause();
  }

  /** The connection closed: the paused-connections meter is balanced if it was paused. */
  void closed() {
    if (clear()) {
      metrics.readingResumed();
    }
  }
}
