package io.frameecho.server.impl.connection;

import io.frameecho.server.CloseReason;
import io.frameecho.server.RequestLoss;

import java.util.List;

/**
 * Where a connection's close stands, and why; immutable, replaced whole at each step. The first reason wins, except
 * that a cut may overrule a graceful shutdown ({@link #overrulingShutdown}).
 *
 * @param stage       how far the close has gone
 * @param reason      why it closes; null while {@link Stage#OPEN}
 * @param requestLost a request reached the connection after the server had chosen to close it ({@link #requestReached})
 * @param ending      how it ended; null until its socket has closed
 * @param ioError     the socket's error, when it decided the reason ({@link #decideIoError}); else null
 */
record CloseState(Stage stage, CloseReason reason, boolean requestLost, Ending ending, Throwable ioError) {

  static final CloseState OPEN = new CloseState(Stage.OPEN, null, false, null, null);

  /** How far a close has gone. */
  enum Stage {
    /** Nothing decided. */
    OPEN,
    /** Decided: nothing more is read; the socket closes once the awaited answers are written. */
    ANSWERING,
    /** Decided by shutdown for a connection that owes nothing: a FIN at once, then a short linger. */
    ANSWERING_IDLE,
    /** Every answer written: a FIN once they are flushed, then the close lingers. */
    CLOSING,
    /** Owing nothing: a FIN, then a close once the client closes its side. */
    CLOSING_IDLE,
    /** Closed at once, dropping what is queued. */
    CUT,
    /** Closing owing nothing, then closed at once. */
    CUT_IDLE,
    /** Shutdown's deadline closed it at once before everything it owed was delivered. */
    CUT_AT_DEADLINE;

    /** The socket has been told to close. */
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

  /** A reason has been decided. */
  boolean decided() {
    return reason != null;
  }

  /** {@code why}, unless a reason was decided before. */
  CloseState decide(CloseReason why) {
    return decided() ? this : new CloseState(Stage.ANSWERING, why, requestLost, ending, ioError);
  }

  /** The socket failed: {@link CloseReason#IO_ERROR} with {@code error} kept, unless a reason was decided before. */
  CloseState decideIoError(Throwable error) {
    return decided() ? this : new CloseState(Stage.ANSWERING, CloseReason.IO_ERROR, requestLost, ending, error);
  }

  /** Shutdown found the connection owing nothing (it was open). */
  CloseState decideIdle() {
    return decided() ? this : new CloseState(Stage.ANSWERING_IDLE, CloseReason.SERVER_SHUTDOWN, requestLost, ending, ioError);
  }

  /** {@code why}, unless a reason other than a graceful shutdown was decided before. */
  CloseState overrulingShutdown(CloseReason why) {
    return reason == CloseReason.SERVER_SHUTDOWN ? new CloseState(stage, why, requestLost, ending, ioError) : decide(why);
  }

  /**
   * Request bytes arrived after the close was decided: a loss when the server chose to close, not when the client
   * caused it.
   */
  CloseState requestReached() {
    boolean serverChose = reason != null && switch (reason) {
      case CLIENT_CLOSED, UNEXPECTED_EOF, PROTOCOL_ERROR, FRAME_TIMEOUT -> false;
      default -> true;
    };
    return serverChose && !requestLost ? new CloseState(stage, reason, true, ending, ioError) : this;
  }

  /** The answers are written: the socket is told to close. */
  CloseState closeAsked() {
    return new CloseState(stage.idle() ? Stage.CLOSING_IDLE : Stage.CLOSING, reason, requestLost, ending, ioError);
  }

  /** Closed at once. */
  CloseState cut() {
    Stage next = stage == Stage.CUT_AT_DEADLINE ? stage : stage.idle() ? Stage.CUT_IDLE : Stage.CUT;
    return new CloseState(next, reason, requestLost, ending, ioError);
  }

  /** Shutdown's deadline closed it at once before everything it owed was delivered. */
  CloseState cutAtDeadline() {
    return new CloseState(Stage.CUT_AT_DEADLINE, reason, requestLost, ending, ioError);
  }

  /** The socket has closed; {@code undelivered}: answers or responses were lost. */
  CloseState ended(boolean undelivered) {
    Ending how = stage == Stage.CUT_AT_DEADLINE || undelivered ? Ending.CUT : requestLost ? Ending.REQUEST_DISCARDED
      : stage.idle() ? Ending.CLOSED_IDLE : Ending.DRAINED;
    return new CloseState(stage, reason, requestLost, how, ioError);
  }

  /** The socket moved to a successor process owing nothing: nothing was lost, its client saw no close. */
  CloseState handedOver() {
    return new CloseState(stage, reason, requestLost, Ending.HANDED_OVER, ioError);
  }

  /** What the client lost, once the socket has closed: one entry per cause, for the meter. */
  List<RequestLoss> losses() {
    if (ending == Ending.CUT) {
      return requestLost ? List.of(RequestLoss.CUT, RequestLoss.AFTER_CLOSE) : List.of(RequestLoss.CUT);
    }
    return requestLost ? List.of(RequestLoss.AFTER_CLOSE) : List.of();
  }
}
