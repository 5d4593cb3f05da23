package io.frameecho.server.impl;

import io.frameecho.protocol.FrameParser;

/**
 * The book's {@code want_read}: why a connection is not reading, in one place. Reading stops when the first
 * reason appears and starts again when the last one clears; the parser's pause also holds back frames it
 * has received and not delivered yet.
 */
final class ReadGate {

  /** Why reading is paused. */
  enum Reason {
    /** More than {@code writeQueueMaxSize} bytes of responses wait to be written. */
    WRITE_QUEUE_FULL,
    /** {@code handler.maxInFlight} answers are awaited. */
    TOO_MANY_IN_FLIGHT,
    /** The buffer budget is spent: more bytes read would be held past its limit. */
    OVER_BUFFER_BUDGET;

    private final int bit = 1 << ordinal();
  }

  /** What the gate tells its connection. */
  interface Listener {
    /** Reading stopped for {@code reason}, which was not a reason before. */
    void paused(Reason reason);

    /** Every reason has cleared and reading has resumed. */
    void opened();
  }

  private final FrameParser parser;
  private final FrameEchoMetrics metrics;
  private final Listener listener;
  /** One bit per {@link Reason}; the book's {@code want_read} is this being zero. */
  private int reasons;
  /** Set once the connection is closing: the gate never opens the parser again. */
  private boolean shut;

  ReadGate(FrameParser parser, FrameEchoMetrics metrics, Listener listener) {
    this.parser = parser;
    this.metrics = metrics;
    this.listener = listener;
  }

  void pause(Reason reason) {
    if ((reasons & reason.bit) != 0) {
      return;
    }
    if (reasons == 0) {
      parser.pause();
      metrics.readingPaused();
    }
    reasons |= reason.bit;
    listener.paused(reason);
  }

  void resume(Reason reason) {
    if ((reasons & reason.bit) == 0) {
      return;
    }
    reasons &= ~reason.bit;
    if (reasons == 0) {
      metrics.readingResumed();
      if (!shut) {
        parser.resume();
        listener.opened();
      }
    }
  }

  boolean isOpen() {
    return reasons == 0;
  }

  boolean isPausedFor(Reason reason) {
    return (reasons & reason.bit) != 0;
  }

  /** Whether reading is paused for a reason other than {@code reason}. */
  boolean isPausedForOtherThan(Reason reason) {
    return (reasons & ~reason.bit) != 0;
  }

  /** The connection is closing: stop reading for good, whatever the reasons. */
  void shut() {
    shut = true;
    parser.pause();
  }

  /** The connection closed: the reasons no longer count in the metrics. */
  void closed() {
    if (reasons != 0) {
      reasons = 0;
      metrics.readingResumed();
    }
  }
}
