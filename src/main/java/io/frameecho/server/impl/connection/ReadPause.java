package io.frameecho.server.impl.connection;

import io.frameecho.protocol.FrameParser;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.impl.shared.BudgetAccount;

/**
 * Why a connection is not reading ({@code want_read}), and what a pause does. Reading is paused while any
 * {@link Reason} stands and resumes when the last one clears, unless it was {@link #stopForGood stopped for good}. A
 * pause stops the parser and the frame clock (time the server keeps a frame unread is not the client's); a pause the
 * server chose (anything but the budget) tells the budget the server, not the client, holds the frame.
 */
final class ReadPause {

  /** Why reading is paused, with the loop log's words for it. */
  enum Reason {
    /** More than {@code writeQueueMaxSize} bytes of responses wait to be written. */
    WRITE_QUEUE_FULL("the write queue is over writeQueueMaxSize", "the write queue drained"),
    /** {@code handler.maxInFlight} answers are awaited. */
    TOO_MANY_IN_FLIGHT("handler.maxInFlight answers are awaited", "an awaited answer came"),
    /** The buffer budget is spent: more bytes read would be held past its limit. */
    OVER_BUFFER_BUDGET("the buffer budget is spent (maxBufferedBytes)", "the buffer budget has room");

    final String paused;
    final String cleared;
    private final int bit = 1 << ordinal();

    Reason(String paused, String cleared) {
      this.paused = paused;
      this.cleared = cleared;
    }
  }

  /** The reasons the server chose: all but the budget's. */
  private static final int SERVER_CHOSEN = ~Reason.OVER_BUFFER_BUDGET.bit;

  private final FrameParser parser;
  private final FrameEchoMetrics metrics;
  private final ConnectionTimers timers;
  private final BudgetAccount account;
  private final ConnectionLog log;
  /** One bit per {@link Reason}; zero means reading. */
  private int reasons;
  /** Set once the connection is closing: reading never resumes. */
  private boolean stopped;

  ReadPause(FrameParser parser, FrameEchoMetrics metrics, ConnectionTimers timers, BudgetAccount account, ConnectionLog log) {
    this.parser = parser;
    this.metrics = metrics;
    this.timers = timers;
    this.account = account;
    this.log = log;
  }

  /** {@code want_read}: no reason stands (reading may still be stopped for good, once the connection closes). */
  boolean wantRead() {
    return reasons == 0;
  }

  boolean isPausedFor(Reason reason) {
    return (reasons & reason.bit) != 0;
  }

  boolean isPausedOnlyFor(Reason reason) {
    return reasons == reason.bit;
  }

  /** Adds {@code reason}; nothing when it stands already. */
  void pauseFor(Reason reason) {
    int before = reasons;
    if ((before & reason.bit) != 0) {
      return;
    }
    reasons |= reason.bit;
    log.readingPaused(reason, before == 0);
    if (before == 0) {
      parser.pause();
      metrics.readingPaused();
      timers.readingPaused();
    }
    if ((before & SERVER_CHOSEN) == 0 && (reasons & SERVER_CHOSEN) != 0) {
      account.serverPaused(true);
    }
    if (reason == Reason.WRITE_QUEUE_FULL) {
      timers.writeWaiting();
    }
  }

  /** Clears {@code reason}; true when reading restarts and the parser has delivered the frames it held while paused. */
  boolean resumeFrom(Reason reason) {
    int before = reasons;
    if ((before & reason.bit) == 0) {
      return false;
    }
    reasons &= ~reason.bit;
    if (!stopped) {
      log.readingResumed(reason, reasons == 0);
    }
    if ((before & SERVER_CHOSEN) != 0 && (reasons & SERVER_CHOSEN) == 0) {
      account.serverPaused(false);
    }
    if (reasons != 0) {
      return false;
    }
    timers.readingResumed();
    metrics.readingResumed();
    if (stopped) {
      return false;
    }
    parser.resume();
    return true;
  }

  /** The connection is closing: reading stops for good, the reasons still kept for the meters. */
  void stopForGood() {
    stopped = true;
    parser.pause();
  }

  /** The connection closed: balances the paused-connections meter. */
  void closed() {
    if (reasons != 0) {
      reasons = 0;
      metrics.readingResumed();
    }
  }
}
