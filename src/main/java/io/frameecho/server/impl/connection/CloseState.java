package io.frameecho.server.impl.connection;

import io.frameecho.server.CloseReason;

/**
 * Where one connection's close stands, and why: the book's {@code want_close} and what follows it, as one value that
 * a {@link Connection} replaces whole at each step. The first reason wins, but for the cuts that overrule a graceful
 * shutdown ({@link #overrulingShutdown}); how the connection ended is known once its socket has closed.
 *
 * @param stage  how far the close has gone
 * @param reason why it closes; null while {@link Stage#OPEN}
 * @param ending how it ended; null until its socket has closed
 */
record CloseState(Stage stage, CloseReason reason, Ending ending) {

  static final CloseState OPEN = new CloseState(Stage.OPEN, null, null);

  /** How far a close has gone. */
  enum Stage {
    /** Nothing decided. */
    OPEN,
    /** Decided: nothing more is read; the socket closes, lingering, once the answers awaited are written. */
    ANSWERING,
    /** Decided by shutdown for a connection that owes nothing: the socket closes at once, without lingering. */
    ANSWERING_IDLE,
    /** Every answer written: a FIN once they are flushed, then the close lingers. */
    CLOSING,
    /** Owing nothing: a FIN, then the socket closes at the event loop's next turn. */
    CLOSING_IDLE,
    /** Closed at once, dropping what is queued. */
    CUT,
    /** Closing owing nothing, then closed at once. */
    CUT_IDLE,
    /** Shutdown's deadline closed it at once before everything it owed was delivered. */
    CUT_AT_DEADLINE;

    /** The socket has been told to close (the book's close after {@code want_close}). */
    boolean closeAsked() {
      return ordinal() >= CLOSING.ordinal();
    }

    /** Closed at once: not cut again. */
    boolean cut() {
      return ordinal() >= CUT.ordinal();
    }

    /** Shutdown closed it because it owed nothing. */
    boolean idle() {
      return this == ANSWERING_IDLE || this == CLOSING_IDLE || this == CUT_IDLE;
    }
  }

  /** How a connection ended, once its socket closed. */
  enum Ending {
    /** Closed after everything it owed was delivered. */
    DRAINED,
    /** Closed by shutdown at once, owing nothing. */
    CLOSED_IDLE,
    /** Ended with answers or responses it could not deliver. */
    CUT
  }

  /** A reason has been decided. */
  boolean decided() {
    return reason != null;
  }

  /** {@code why}, unless a reason was decided before. */
  CloseState decide(CloseReason why) {
    return decided() ? this : new CloseState(Stage.ANSWERING, why, ending);
  }

  /** Shutdown found the connection owing nothing (it was open). */
  CloseState decideIdle() {
    return decided() ? this : new CloseState(Stage.ANSWERING_IDLE, CloseReason.SERVER_SHUTDOWN, ending);
  }

  /** {@code why}, unless a reason other than a graceful shutdown was decided before. */
  CloseState overrulingShutdown(CloseReason why) {
    return reason == CloseReason.SERVER_SHUTDOWN ? new CloseState(stage, why, ending) : decide(why);
  }

  /** The answers are written: the socket is told to close. */
  CloseState closeAsked() {
    return new CloseState(stage.idle() ? Stage.CLOSING_IDLE : Stage.CLOSING, reason, ending);
  }

  /** Closed at once. */
  CloseState cut() {
    Stage next = stage == Stage.CUT_AT_DEADLINE ? stage : stage.idle() ? Stage.CUT_IDLE : Stage.CUT;
    return new CloseState(next, reason, ending);
  }

  /** Shutdown's deadline closed it at once before everything it owed was delivered. */
  CloseState cutAtDeadline() {
    return new CloseState(Stage.CUT_AT_DEADLINE, reason, ending);
  }

  /** The socket has closed; {@code undelivered}: answers or responses were lost. */
  CloseState ended(boolean undelivered) {
    Ending how = stage == Stage.CUT_AT_DEADLINE || undelivered ? Ending.CUT : stage.idle() ? Ending.CLOSED_IDLE : Ending.DRAINED;
    return new CloseState(stage, reason, how);
  }
}
