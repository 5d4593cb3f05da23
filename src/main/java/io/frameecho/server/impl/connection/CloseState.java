package io.frameecho.server.impl.connection;

import io.frameecho.server.CloseReason;
import io.frameecho.server.RequestLoss;

import java.util.List;

/**
 * Where a connection's close stands, why, and once its socket has closed how it ended; immutable, replaced whole at
 * each step. The first reason wins, except that a cut may overrule a graceful shutdown ({@link #overrulingShutdown}).
 *
 * @param stage       how far the close has gone
 * @param idle        shutdown closes it because it owed nothing ({@link #decideIdle}): a FIN at once, a short linger
 * @param reason      why it closes; null while {@link Stage#OPEN}
 * @param requestLost a request reached the connection after the server had chosen to close it ({@link #requestReached})
 * @param ending      how it ended; null until its socket has closed
 * @param ioError     the socket's error, when it decided the reason ({@link #decideIoError}); else null
 */
public record CloseState(Stage stage, boolean idle, CloseReason reason, boolean requestLost, Ending ending,
                         Throwable ioError) {

  static final CloseState OPEN = new CloseState(Stage.OPEN, false, null, false, null, null);

  /** How a connection ended, once its socket closed; what shutdown's drain counts. */
  public enum Ending {
    /** Closed after everything it owed was delivered. */
    DRAINED,
    /** Closed by shutdown at once, owing nothing, with no request after the close was decided. */
    CLOSED_IDLE,
    /** Every answer delivered, but a request that came after the server chose to close was discarded. */
    REQUEST_DISCARDED,
    /** Ended with answers or responses it could not deliver. */
    CUT,
    /** Handed to a successor process on restart, owing nothing; its client saw no close. */
    HANDED_OVER
  }

  /** How far a close has gone. */
  enum Stage {
    /** Nothing decided. */
    OPEN,
    /** Decided: nothing more is read; the socket closes once the awaited answers are written. */
    ANSWERING,
    /** Every answer written: a FIN once they are flushed, then the close lingers (idle: until the client closes). */
    CLOSING,
    /** Closed at once, dropping what is queued (idle: after its FIN, owing nothing). */
    CUT,
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
  }

  /** A reason has been decided. */
  boolean decided() {
    return reason != null;
  }

  /** {@code why}, unless a reason was decided before. */
  CloseState decide(CloseReason why) {
    return decided() ? this : new CloseState(Stage.ANSWERING, idle, why, requestLost, ending, ioError);
  }

  /** The socket failed: {@link CloseReason#IO_ERROR} with {@code error} kept, unless a reason was decided before. */
  CloseState decideIoError(Throwable error) {
    return decided() ? this : new CloseState(Stage.ANSWERING, idle, CloseReason.IO_ERROR, requestLost, ending, error);
  }

  /** Shutdown found the connection owing nothing (it was open). */
  CloseState decideIdle() {
    return decided() ? this : new CloseState(Stage.ANSWERING, true, CloseReason.SERVER_SHUTDOWN, requestLost, ending, ioError);
  }

  /** {@code why}, unless a reason other than a graceful shutdown was decided before. */
  CloseState overrulingShutdown(CloseReason why) {
    return reason == CloseReason.SERVER_SHUTDOWN ? new CloseState(stage, idle, why, requestLost, ending, ioError) : decide(why);
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
    return serverChose && !requestLost ? new CloseState(stage, idle, reason, true, ending, ioError) : this;
  }

  /** The answers are written: the socket is told to close. */
  CloseState closeAsked() {
    return new CloseState(Stage.CLOSING, idle, reason, requestLost, ending, ioError);
  }

  /** Closed at once. */
  CloseState cut() {
    return stage == Stage.CUT_AT_DEADLINE ? this : new CloseState(Stage.CUT, idle, reason, requestLost, ending, ioError);
  }

  /** Shutdown's deadline closed it at once before everything it owed was delivered: no longer idle. */
  CloseState cutAtDeadline() {
    return new CloseState(Stage.CUT_AT_DEADLINE, false, reason, requestLost, ending, ioError);
  }

  /**
   * The socket has closed; {@code undelivered}: answers or responses were lost; {@code handedOver}: it moved to a
   * successor process instead, owing nothing, so nothing was lost and its client saw no close.
   */
  CloseState ended(boolean undelivered, boolean handedOver) {
    Ending how = handedOver ? Ending.HANDED_OVER : stage == Stage.CUT_AT_DEADLINE || undelivered ? Ending.CUT
      : requestLost ? Ending.REQUEST_DISCARDED : idle ? Ending.CLOSED_IDLE : Ending.DRAINED;
    return new CloseState(stage, idle, reason, requestLost, how, ioError);
  }

  /** What the client lost, once the socket has closed: one entry per cause, for the meter. */
  List<RequestLoss> losses() {
    if (ending == Ending.CUT) {
      return requestLost ? List.of(RequestLoss.CUT, RequestLoss.AFTER_CLOSE) : List.of(RequestLoss.CUT);
    }
    return requestLost ? List.of(RequestLoss.AFTER_CLOSE) : List.of();
  }
}
