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

  private final Connection connection;
  private final ConnectionLog log;
  private final long writeStallTimeoutMs;
  private ConnectionTimers timers;

  Cutoffs(Connection connection, ConnectionLog log, long writeStallTimeoutMs) {
    this.connection = connection;
    this.log = log;
    this.writeStallTimeoutMs = writeStallTimeoutMs;
  }

  void wire(ConnectionTimers timers) {
    this.timers = timers;
  }

  @Override
  public boolean idle(long idleMs) {
    if (connection.closing()) {
      return true;
    }
    if (!connection.quiet()) {
      return false;
    }
    log.idle(idleMs);
    connection.closeAfterAnswers(CloseReason.IDLE_TIMEOUT);
    return true;
  }

  @Override
  public void frameTimedOut(long elapsedMs) {
    long underWay = connection.frameBytesUnderWay();
    if (!connection.closing() && underWay >= 0) {
      log.frameTimedOut(elapsedMs, underWay);
      connection.closeAfterAnswers(CloseReason.FRAME_TIMEOUT);
    }
  }

  @Override
  public void writeStalled() {
    if (connection.writeStalledNow()) {
      log.writeStalled(writeStallTimeoutMs);
      connection.cut(CloseReason.WRITE_STALL);
    }
  }

  @Override
  public void firstRequestGraceOver() {
    connection.firstRequestGraceOver();
  }

  @Override
  public void budgetHasRoom() {
    connection.resumeReading(Reason.OVER_BUFFER_BUDGET);
  }

  @Override
  public void budgetEvicted(long heldBytes, long stalledMs, int waiting, long used, long limit) {
    log.budgetEvicted(heldBytes, stalledMs, waiting, used, limit);
    connection.closeAfterAnswers(CloseReason.BUDGET_EVICTED);
  }

  /**
   * The budget is spent and others wait: if the kernel has sent this client nothing for a quarter of {@code
   * writeStallTimeoutMs} (at least {@code graceMs}) while its responses wait, they would stay held until the write-stall
   * clock ends it, and every waiting frame with them; so it is cut now, as a write stall is.
   */
  @Override
  public void evictIfNotReading(long graceMs, int waiting, long used, long limit) {
    if (writeStallTimeoutMs == 0 || !connection.writeStalledNow()) {
      return;
    }
    long stalledMs = timers.msSentNothing(connection.msSinceDataSent());
    if (stalledMs >= 0 && stalledMs >= Math.max(graceMs, writeStallTimeoutMs / 4)) {
      log.nonReaderEvicted(stalledMs, waiting, used, limit);
      connection.cut(CloseReason.BUDGET_EVICTED);
    }
  }
}
