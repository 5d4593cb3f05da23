package io.frameecho.server.impl.connection;

/**
 * The book's {@code want_read}: why a connection is not reading, in one place. Reading is closed while any
 * reason stands and opens when the last one clears, unless the connection is closing ({@link #shut}). The
 * gate only keeps the reasons; the {@link Connection} turns its answers into the parser's pause and resume.
 */
class ReadGate {

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

  /** One bit per {@link Reason}; the book's {@code want_read} is this being zero. */
  private int reasons;
  /** Set once the connection is closing: the gate never opens again. */
  private boolean shut;

  /** Adds {@code reason}; true when it is new (the gate may have been closed already for another). */
  boolean pause(Reason reason) {
    if ((reasons & reason.bit) != 0) {
      return false;
    }
    reasons |= reason.bit;
    return true;
  }

  /** Clears {@code reason}; true when that cleared the last one (reading may start again, unless shut). */
  boolean resume(Reason reason) {
    if ((reasons & reason.bit) == 0) {
      return false;
    }
    reasons &= ~reason.bit;
    return reasons == 0;
  }

  /** No reason stands. */
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

  /** The connection is closing: reading stops for good, whatever the reasons. */
  void shut() {
    shut = true;
  }

  boolean isShut() {
    return shut;
  }

  /** The connection closed: true when reasons still stood (the paused-connections meter is balanced then). */
  boolean clear() {
    boolean stood = reasons != 0;
    reasons = 0;
    return stood;
  }
}
