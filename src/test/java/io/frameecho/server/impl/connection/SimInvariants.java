package io.frameecho.server.impl.connection;

import io.frameecho.server.CloseReason;
import io.frameecho.server.RequestLoss;
import io.frameecho.server.impl.connection.CloseState.Ending;
import io.frameecho.server.impl.shared.BufferBudget;
import io.frameecho.testkit.RecordingMetrics;
import io.frameecho.testkit.VirtualTicker;

import java.util.List;

/** The invariants, one method each; each failure names its invariant. Checked after every step, (e) at the end. */
final class SimInvariants {

  static final String ANSWERS = "(a) answers byte-exact and in order";
  static final String HELD = "(b) bytes held within SimulationBounds.heldBound";
  static final String WELL_BEHAVED = "(c) a well-behaved client is served";
  static final String ONE_CLOSE = "(d) one close reason per connection, counted once";
  static final String RELEASED = "(e) everything released once the clients leave";
  static final String CLOCKS = "(f) no connection outlives its timeouts";
  static final String LOSS_COUNTED = "(g) a request the server closed on is counted lost, and only then";
  static final String HANDED_OVER = "(h) a connection handed over holds nothing its client sent";

  private SimInvariants() {
  }

  /** (a) What each client received is a prefix of the answers it is owed: the echo of what it sent, in order. */
  static void answersExactAndInOrder(List<SimClient> clients) {
    for (SimClient client : clients) {
      if (client.mismatch() != null) {
        throw new SimulationFailure(ANSWERS, "client " + client.slot + " (" + client.behaviour + ", connection "
          + client.socket.id + "): " + client.mismatch());
      }
    }
  }

  /** (b) {@code budget.used()} never above the bound, nor its peak above the bound for the most connections seen open. */
  static void heldWithinBound(BufferBudget budget, SimConfig config, int open, int mostOpen) {
    long used = budget.used();
    long bound = SimulationBounds.heldBound(config, open);
    if (used > bound) {
      throw new SimulationFailure(HELD, "used " + used + " > bound " + bound + " with " + open + " connections open");
    }
    long peakBound = SimulationBounds.heldBound(config, mostOpen);
    if (budget.peak() > peakBound) {
      throw new SimulationFailure(HELD, "peak " + budget.peak() + " > bound " + peakBound + " with at most " + mostOpen
        + " connections open");
    }
  }

  /**
   * (c) No frame of a well-behaved client waits for its whole answer longer than {@link SimulationBounds#answerBoundMs}
   * with the most connections open at once so far.
   */
  static void wellBehavedAnsweredInTime(List<SimClient> clients, SimConfig config, int mostOpen) {
    long bound = SimulationBounds.answerBoundMs(config, mostOpen);
    for (SimClient client : clients) {
      if (client.wellBehaved() && client.oldestWaitMs() > bound) {
        throw new SimulationFailure(WELL_BEHAVED, "client " + client.slot + " (connection " + client.socket.id
          + ") has waited " + client.oldestWaitMs() + " ms for an answer, bound " + bound + " ms");
      }
    }
  }

  /**
   * (c) The server never closes a well-behaved client's connection: only the client's own FIN ends it, and only once
   * every answer it is owed has reached it.
   */
  static void wellBehavedNotClosedByServer(SimClient client, CloseReason reason, boolean shutDown) {
    if (shutDown && reason == CloseReason.SERVER_SHUTDOWN) {
      // Shutdown closes every connection: what it cost the client is (g)'s to check.
      return;
    }
    if (client.wellBehaved() && (reason != CloseReason.CLIENT_CLOSED || !client.leftOnItsOwn())) {
      throw new SimulationFailure(WELL_BEHAVED, "client " + client.slot + " (connection " + client.socket.id
        + ") was closed by the server: " + reason);
    }
    if (client.wellBehaved() && client.owedBytes() != 0) {
      throw new SimulationFailure(WELL_BEHAVED, "client " + client.slot + " (connection " + client.socket.id
        + ") was closed with " + client.owedBytes() + " answer byte(s) it is owed not delivered");
    }
  }

  /**
   * (g) When the server ended a connection for a reason of its own (not the client's end, reset, oversized frame or
   * slowness) and the client saw a clean end (no reset: the server had read every byte it sent), a request the client
   * sent and never had answered whole is counted lost on that connection ({@code losses}, what it reported as it
   * closed); and it reports a request lost after its close only if the client has one.
   */
  static void lossCounted(SimClient client, CloseReason reason, List<RequestLoss> losses) {
    boolean clientCaused = switch (reason) {
      case CLIENT_CLOSED, UNEXPECTED_EOF, PROTOCOL_ERROR, FRAME_TIMEOUT, IO_ERROR -> true;
      default -> false;
    };
    if (!clientCaused && !client.socket.resetAtClose() && client.sentUnanswered() && losses.isEmpty()) {
      throw new SimulationFailure(LOSS_COUNTED, "client " + client.slot + " (" + client.behaviour + ", connection "
        + client.socket.id + ") saw a clean end (" + reason + ") with a request it sent unanswered, and nothing was counted lost");
    }
    if (losses.contains(RequestLoss.AFTER_CLOSE) && !client.sentUnanswered()) {
      throw new SimulationFailure(LOSS_COUNTED, "connection " + client.socket.id + " (" + client.behaviour + ", "
        + reason + ") counted a request lost after its close, but its client had every request answered");
    }
  }

  /**
   * (h) A connection that moved to a successor process had read only what it answered, and its client had every
   * answer: every byte it read belongs to a frame answered whole (what the client sent after stays in the kernel and
   * moves), nothing was counted lost, and it ended as handed over.
   */
  static void handedOverHoldsNothing(SimClient client, List<RequestLoss> losses) {
    long read = client.socket.deliveredBytes();
    if (read != client.answeredEnd()) {
      throw new SimulationFailure(HANDED_OVER, "connection " + client.socket.id + " (" + client.behaviour + ") moved having "
        + "read " + read + " byte(s) of its client's, whose frames answered whole end at " + client.answeredEnd());
    }
    if (!losses.isEmpty() || client.socket.connection().ending() != Ending.HANDED_OVER) {
      throw new SimulationFailure(HANDED_OVER, "connection " + client.socket.id + " moved, ended " + client.socket.connection().ending()
        + " with losses " + losses);
    }
  }

  /**
   * (d) Each connection's closed handler runs once, with one reason counted: as many reasons in the metrics as
   * closed handlers run, none of them null.
   */
  static void oneCloseReasonEach(SimClient client, int closedCalls, RecordingMetrics metrics, int handlersRun) {
    if (closedCalls != 1) {
      throw new SimulationFailure(ONE_CLOSE, "connection " + client.socket.id + "'s closed handler ran " + closedCalls + " times");
    }
    List<CloseReason> reasons = metrics.closeReasons();
    if (reasons.size() != handlersRun || reasons.get(reasons.size() - 1) == null) {
      throw new SimulationFailure(ONE_CLOSE, reasons.size() + " close reasons counted for " + handlersRun
        + " closed handlers run (last " + reasons.get(reasons.size() - 1) + ")");
    }
  }

  /**
   * (f) An incomplete frame older than {@code frameTimeoutMs} (not counting time reading was off, which the server counts
   * in part) or a stuck write queue without progress for longer than {@code writeStallTimeoutMs} and the clock's quarter
   * means the connection outlived its clock.
   */
  static void noConnectionOutlivesItsClocks(List<SimClient> clients, SimConfig config) {
    long slack = SimulationBounds.clockSlackMs(config);
    for (SimClient client : clients) {
      long frameMs = client.socket.incompleteFrameMs();
      if (frameMs > config.frameTimeoutMs() + slack) {
        throw new SimulationFailure(CLOCKS, "connection " + client.socket.id + " (" + client.behaviour
          + ") has had a frame incomplete for " + frameMs + " ms of reading, frameTimeoutMs " + config.frameTimeoutMs());
      }
      long writeMs = client.socket.writeStuckMs();
      if (writeMs > config.writeStallTimeoutMs() + config.writeStallTimeoutMs() / 4 + slack) {
        throw new SimulationFailure(CLOCKS, "connection " + client.socket.id + " (" + client.behaviour
          + ") has had its write queue stuck for " + writeMs + " ms, writeStallTimeoutMs " + config.writeStallTimeoutMs());
      }
    }
  }

  /**
   * (e) Once every client has left and the clock has passed every linger and timeout: every connection closed, nothing
   * held or waiting in the budget, every read released, no timer left, no task left on any loop.
   */
  static void everythingReleased(List<SimClient> all, BufferBudget budget, SimReads reads, VirtualTicker ticker,
                                 SimLoops loops) {
    for (SimClient client : all) {
      if (!client.socket.closedDelivered()) {
        throw new SimulationFailure(RELEASED, "connection " + client.socket.id + " (" + client.behaviour + ") never closed");
      }
    }
    if (budget.used() != 0 || budget.waiting() != 0) {
      throw new SimulationFailure(RELEASED, "budget used " + budget.used() + ", waiting " + budget.waiting());
    }
    int held = reads.stillHeld();
    if (held != 0) {
      throw new SimulationFailure(RELEASED, held + " read buffer(s) never released");
    }
    if (ticker.pending() != 0) {
      throw new SimulationFailure(RELEASED, ticker.pending() + " timer(s) left on the ticker");
    }
    if (!loops.idle()) {
      throw new SimulationFailure(RELEASED, "tasks left on the loops");
    }
  }
}
