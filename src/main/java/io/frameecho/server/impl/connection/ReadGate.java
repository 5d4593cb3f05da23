package io.frameecho.server.impl.connection;

/**
 * Why a connection is not reading. Reading is paused while any reason stands and resumes when the last one clears,
 * unless the gate is {@link #shut}. It only keeps the reasons; {@link Reading} acts on them.
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

  /** One bit per {@link Reason}; zero means reading. */
  private int reasons;
  /** Set once the connection is closing: the gate never opens again. */
  private boolean shut;

  /** Adds {@code reason}; true when it was not already set. */
  boolean pause(Reason reason) {
    if ((reasons & reason.bit) != 0) {
      return false;
    }
    reasons |= reason.bit;
    return true;
  }

  /** Clears {@code reason}; true when it was the last one. */
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

  /** Reading stops for good, whatever the reasons. */
  void shut() {
    shut = true;
  }

  boolean isShut() {
    return shut;
  }

  /** Clears every reason; true when some stood. */
  boolean clear() {
    boolean stood = reasons != 0;
    reasons = 0;
    return stood;
  }
}
