package io.frameecho.server.impl.connection;

import io.frameecho.protocol.FrameParser;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.impl.connection.ReadGate.Reason;
import io.frameecho.server.impl.shared.BudgetAccount;

/**
 * A {@link ReadGate} that pauses and resumes the parser. A pause also stops the frame timer (time the server keeps a
 * frame unread is not the client's) and tells the budget the server, not the client, holds the frame.
 */
final class Reading extends ReadGate {

  private FrameParser parser;
  private FrameEchoMetrics metrics;
  private ConnectionTimers timers;
  private BudgetAccount account;
  private ConnectionLog log;

  /** Once, when the connection starts. */
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

  /** Clears {@code reason}; true when reading restarts and the parser has delivered the frames it held while paused. */
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

  /** The connection closed: balances the paused-connections meter. */
  void closed() {
    if (clear()) {
      metrics.readingResumed();
    }
  }
}
