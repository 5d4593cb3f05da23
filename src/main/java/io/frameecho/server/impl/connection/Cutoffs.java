package io.frameecho.server.impl.connection;

import io.frameecho.server.CloseReason;
import io.frameecho.server.impl.connection.ReadPause.Reason;
import io.frameecho.server.impl.shared.BudgetAccount;

/**
 * Decides whether a timer ({@link ConnectionTimers}) or budget ({@link BudgetAccount}) event closes the connection,
 * given what it owes now, and with which close reason.
 */
final class Cutoffs implements ConnectionTimers.Events, BudgetAccount.Owner {

  /** How long after accept a silent connection may still send a first request once shutdown began, to be answered. */
  static final long FIRST_REQUEST_GRACE_MS = 500;

  /** What a connection found reading at shutdown waits for before it closes. */
  private enum ShutdownWait {
    NONE,
    /** Accepted within {@link #FIRST_REQUEST_GRACE_MS}, nothing read yet: its first requests. */
    FIRST_REQUEST,
    /** A frame under way: that frame, whole. */
    REQUEST_UNDER_WAY
  }

  private final Connection connection;
  private ShutdownWait shutdownWait = ShutdownWait.NONE;

  Cutoffs(Connection connection) {
    this.connection = connection;
  }

  private boolean closing() {
    return connection.closeState().decided();
  }

  /** Not cut, and the client takes no response: the write queue is full, or a close waits to flush. */
  private boolean writeStalledNow() {
    CloseState.Stage stage = connection.closeState().stage();
    return !stage.cut() && (stage.closeAsked() ? !connection.socket.lingering()
      : connection.reading.isPausedFor(Reason.WRITE_QUEUE_FULL) && connection.writer.writeQueueFull());
  }

  /** Not idle while an answer is awaited, reading is paused or a frame is under way. */
  @Override
  public boolean idle(long idleMs) {
    if (closing()) {
      return true;
    }
    if (connection.responses.awaiting() || !connection.reading.isOpen() || !connection.parser.atFrameBoundary()) {
      return false;
    }
    connection.log.idle(idleMs);
    connection.closeAfterAnswers(CloseReason.IDLE_TIMEOUT);
    return true;
  }

  @Override
  public void frameTimedOut(long elapsedMs) {
    if (!closing() && !connection.parser.atFrameBoundary()) {
      connection.log.frameTimedOut(elapsedMs, connection.parser.bufferedBytes());
      connection.closeAfterAnswers(CloseReason.FRAME_TIMEOUT);
    }
  }

  @Override
  public void writeStalled() {
    if (writeStalledNow()) {
      connection.log.writeStalled(connection.options.getWriteStallTimeoutMs());
      connection.cut(CloseReason.WRITE_STALL);
    }
  }

  /**
   * Closes at once if the connection owes nothing, else after its answers. A request on its way is not lost: a new
   * silent connection waits {@link #FIRST_REQUEST_GRACE_MS} for it, one with a frame under way reads it whole; the frame
   * timeout and {@link #shutdownDeadline} bound the wait.
   */
  void shutdownRequested() {
    if (closing() || shutdownWait != ShutdownWait.NONE) {
      return;
    }
    if (!connection.receivedBytes() && connection.timers.awaitFirstRequest(FIRST_REQUEST_GRACE_MS, connection.place.joinedNanos)) {
      shutdownWait = ShutdownWait.FIRST_REQUEST;
    } else if (!connection.parser.atFrameBoundary()) {
      shutdownWait = ShutdownWait.REQUEST_UNDER_WAY;
    } else {
      connection.closeForShutdown(connection.owesNothing());
    }
  }

  /**
   * True once what shutdown waited for has arrived. A frame begun after the awaited one counts as lost, so a client
   * that keeps pipelining cannot hold the shutdown.
   */
  boolean shutdownWaitOver(boolean completed, boolean underWay) {
    return switch (shutdownWait) {
      case NONE -> false;
      case FIRST_REQUEST -> completed && !underWay;
      case REQUEST_UNDER_WAY -> completed;
    };
  }

  @Override
  public void firstRequestGraceOver() {
    if (!closing() && !connection.receivedBytes()) {
      connection.closeForShutdown(connection.owesNothing());
    }
  }

  /**
   * At shutdown's deadline, a connection waiting only for a request under way closes owing nothing, so the request
   * counts as lost rather than as a cut. True if it closed.
   */
  boolean shutdownDeadline() {
    if (shutdownWait == ShutdownWait.NONE || closing() || connection.responses.awaiting()
      || connection.socket.pendingWriteBytes() != 0) {
      return false;
    }
    connection.closeForShutdown(true);
    return true;
  }

  @Override
  public void budgetHasRoom() {
    connection.resumeReading(Reason.OVER_BUFFER_BUDGET);
  }

  @Override
  public void budgetEvicted(long heldBytes, long stalledMs, int waiting, long used, long limit) {
    connection.log.budgetEvicted(heldBytes, stalledMs, waiting, used, limit);
    connection.closeAfterAnswers(CloseReason.BUDGET_EVICTED);
  }

  /**
   * The budget is spent and others wait: a client sent nothing for a quarter of {@code writeStallTimeoutMs} (at least
   * {@code graceMs}) while responses wait is cut now, rather than hold the budget until its write stall.
   */
  @Override
  public void evictIfNotReading(long graceMs, int waiting, long used, long limit) {
    long writeStallTimeoutMs = connection.options.getWriteStallTimeoutMs();
    if (writeStallTimeoutMs == 0 || !writeStalledNow()) {
      return;
    }
    long stalledMs = connection.timers.msSentNothing(connection.socket.msSinceDataSent());
    if (stalledMs >= 0 && stalledMs >= Math.max(graceMs, writeStallTimeoutMs / 4)) {
      connection.log.nonReaderEvicted(stalledMs, waiting, used, limit);
      connection.cut(CloseReason.BUDGET_EVICTED);
    }
  }
}
