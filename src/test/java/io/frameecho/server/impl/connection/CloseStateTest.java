package io.frameecho.server.impl.connection;

import io.frameecho.server.CloseReason;
import io.frameecho.server.impl.connection.CloseState.Ending;
import io.frameecho.server.impl.connection.CloseState.Stage;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A connection's close as one value: the first reason wins, each step follows the last, the ending is decided once closed. */
class CloseStateTest {

  @Test
  void theFirstReasonWins() {
    CloseState state = CloseState.OPEN.decide(CloseReason.IDLE_TIMEOUT).decide(CloseReason.PROTOCOL_ERROR);
    assertEquals(new CloseState(Stage.ANSWERING, CloseReason.IDLE_TIMEOUT, null), state);
    assertFalse(CloseState.OPEN.decided());
    assertTrue(state.decided());
  }

  @Test
  void aCutOverrulesAGracefulShutdownOnly() {
    CloseState draining = CloseState.OPEN.decide(CloseReason.SERVER_SHUTDOWN);
    assertEquals(CloseReason.WRITE_STALL, draining.overrulingShutdown(CloseReason.WRITE_STALL).reason());
    CloseState timedOut = CloseState.OPEN.decide(CloseReason.FRAME_TIMEOUT);
    assertEquals(CloseReason.FRAME_TIMEOUT, timedOut.overrulingShutdown(CloseReason.WRITE_STALL).reason());
    assertEquals(CloseReason.BUDGET_EVICTED, CloseState.OPEN.overrulingShutdown(CloseReason.BUDGET_EVICTED).reason());
  }

  @Test
  void aDrainedCloseIsAskedOnceItsAnswersAreWritten() {
    CloseState state = CloseState.OPEN.decide(CloseReason.CLIENT_CLOSED);
    assertFalse(state.stage().closeAsked());
    state = state.closeAsked();
    assertEquals(Stage.CLOSING, state.stage());
    assertTrue(state.stage().closeAsked());
    assertFalse(state.stage().cut());
    assertEquals(Ending.DRAINED, state.ended(false).ending());
    assertEquals(Ending.CUT, state.ended(true).ending(), "a response lost");
  }

  @Test
  void anIdleCloseStaysIdleUnlessSomethingWasLost() {
    CloseState state = CloseState.OPEN.decideIdle();
    assertEquals(new CloseState(Stage.ANSWERING_IDLE, CloseReason.SERVER_SHUTDOWN, null), state);
    state = state.closeAsked();
    assertEquals(Stage.CLOSING_IDLE, state.stage());
    assertEquals(Ending.CLOSED_IDLE, state.ended(false).ending());
    CloseState cutAfterItsFin = state.cut();
    assertEquals(Stage.CUT_IDLE, cutAfterItsFin.stage());
    assertEquals(Ending.CLOSED_IDLE, cutAfterItsFin.ended(false).ending(), "its FIN was out: nothing was owed");
  }

  @Test
  void shutdownsDeadlineBeforeTheFinIsACut() {
    CloseState state = CloseState.OPEN.decide(CloseReason.SERVER_SHUTDOWN).cutAtDeadline();
    assertTrue(state.stage().cut());
    assertEquals(Stage.CUT_AT_DEADLINE, state.cut().stage(), "cut once");
    assertEquals(Ending.CUT, state.ended(false).ending());
    assertNull(state.ending(), "decided only once the socket has closed");
  }

  @Test
  void aSocketThatClosedBeforeItsCloseWasAskedStillHasItsCloseToAsk() {
    CloseState ended = CloseState.OPEN.decide(CloseReason.CLIENT_CLOSED).ended(false);
    assertFalse(ended.stage().closeAsked());
    assertEquals(Ending.DRAINED, ended.closeAsked().ending(), "asking keeps how it ended");
  }
}
