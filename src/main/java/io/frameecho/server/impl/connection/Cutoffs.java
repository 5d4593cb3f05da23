package io.frameecho.server.impl.connection;

import io.frameecho.server.CloseReason;
import io.frameecho.server.impl.connection.ReadGate.Reason;
import io.frameecho.server.impl.shared.BudgetAccount;

/**
 * The limits that end a connection from outside its traffic: its clocks ({@link ConnectionTimers}: idle, a frame too
 * slow, responses not read, the shutdown grace for a first request) and the budget ({@link BudgetAccount}: eviction
 * by progress, the cut of a client that reads no response). Each event is weighed against what the connection owes
 * now, and ends it with its own close reason and log line, or not. On the connection's event loop.
 */
final class Cutoffs implements ConnectionTimers.Events, BudgetAccount.Owner {

  /**
   * How long after its accept a connection that has sent nothing may still send its first request once shutdown has
   * begun: a client that connects and sends at once, accepted just before the server stopped accepting, is answered.
   */
  static final long FIRST_REQUEST_GRACE_MS = 500;

  private final Connection connection;
  /** Shutdown has begun and the connection waits, within its first-request grace, for its first request. */
  private boolean awaitingFirstRequest;

  /** The cutoffs of {@code connection}, which they reach through its rooms (one connection's, one event loop). */
  Cutoffs(Connection connection) {
    this.connection = connection;
  }

  private boolean closing() {
    return connection.closeState().decided();
  }

  /** Not cut yet, and its client takes no response byte: the queue full and reading paused for it, or a close waits to flush. */
  private boolean writeStalledNow() {
    CloseState.Stage stage = connection.closeState().stage();
    return !stage.cut() && (stage.closeAsked() ? !connection.socket.lingering()
      : connection.reading.isPausedFor(Reason.WRITE_QUEUE_FULL) && connection.writer.writeQueueFull());
  }

  /** Idle unless busy all the same: an answer awaited, reading paused, a frame under way. */
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
   * Shutdown: the connection closes at once if it owes nothing, after its answers if it owes some; one accepted less
   * than {@link #FIRST_REQUEST_GRACE_MS} ago that has sent nothing yet first waits that long for its first request,
   * and is answered.
   */
  void shutdownRequested() {
    if (closing() || awaitingFirstRequest) {
      return;
    }
    if (!connection.receivedBytes() && connection.timers.awaitFirstRequest(FIRST_REQUEST_GRACE_MS, connection.place.joinedNanos)) {
      awaitingFirstRequest = true;
      return;
    }
    connection.closeForShutdown();
  }

  boolean awaitingFirstRequest() {
    return awaitingFirstRequest;
  }

  /** A request under way finishes first: the connection closes once it is whole (frameTimeoutMs bounds the wait). */
  @Override
  public void firstRequestGraceOver() {
    if (!closing() && !connection.receivedBytes()) {
      connection.closeForShutdown();
    }
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
   * The budget is spent and others wait: if the kernel has sent this client nothing for a quarter of {@code
   * writeStallTimeoutMs} (at least {@code graceMs}) while its responses wait, they would stay held until the write-stall
   * clock ends it, and every waiting frame with them; so it is cut now, as a write stall is.
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
