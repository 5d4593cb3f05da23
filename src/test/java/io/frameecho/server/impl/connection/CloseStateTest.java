package io.frameecho.server.impl.connection;

import io.frameecho.server.CloseReason;
import io.frameecho.server.RequestLoss;
import io.frameecho.server.impl.connection.CloseState.Ending;
import io.frameecho.server.impl.connection.CloseState.Stage;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A connection's close as one value: the first reason wins, each step follows the last, the ending is decided once closed. */
class CloseStateTest {

  @Test
  void theFirstReasonWins() {
    CloseState state = CloseState.OPEN.decide(CloseReason.IDLE_TIMEOUT).decide(CloseReason.PROTOCOL_ERROR);
    assertEquals(new CloseState(Stage.ANSWERING, false, CloseReason.IDLE_TIMEOUT, false, null, null), state);
    assertFalse(CloseState.OPEN.decided());
    assertTrue(state.decided());
  }

  @Test
  void anIoErrorDecidesOnlyAsTheFirstReasonAndIsKeptToTheEnd() {
    java.io.IOException reset = new java.io.IOException("Connection reset by peer");
    CloseState failed = CloseState.OPEN.decideIoError(reset);
    assertEquals(new CloseState(Stage.ANSWERING, false, CloseReason.IO_ERROR, false, null, reset), failed);
    CloseState ended = failed.decide(CloseReason.IDLE_TIMEOUT).cut().ended(false, false);
    assertEquals(CloseReason.IO_ERROR, ended.reason());
    assertEquals(reset, ended.ioError(), "carried through every later step");
    CloseState decidedBefore = CloseState.OPEN.decide(CloseReason.FRAME_TIMEOUT).decideIoError(reset);
    assertEquals(CloseReason.FRAME_TIMEOUT, decidedBefore.reason());
    assertNull(decidedBefore.ioError(), "an error after the reason was decided is not why it closed");
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
    assertEquals(Ending.DRAINED, state.ended(false, false).ending());
    assertEquals(Ending.CUT, state.ended(true, false).ending(), "a response lost");
  }

  @Test
  void anIdleCloseStaysIdleUnlessSomethingWasLost() {
    CloseState state = CloseState.OPEN.decideIdle();
    assertEquals(new CloseState(Stage.ANSWERING, true, CloseReason.SERVER_SHUTDOWN, false, null, null), state);
    state = state.closeAsked();
    assertEquals(Stage.CLOSING, state.stage());
    assertTrue(state.idle(), "asking to close keeps it idle");
    assertEquals(Ending.CLOSED_IDLE, state.ended(false, false).ending());
    CloseState cutAfterItsFin = state.cut();
    assertEquals(Stage.CUT, cutAfterItsFin.stage());
    assertTrue(cutAfterItsFin.idle(), "a cut after its FIN keeps it idle");
    assertEquals(Ending.CLOSED_IDLE, cutAfterItsFin.ended(false, false).ending(), "its FIN was out: nothing was owed");
  }

  @Test
  void shutdownsDeadlineBeforeTheFinIsACut() {
    CloseState state = CloseState.OPEN.decide(CloseReason.SERVER_SHUTDOWN).cutAtDeadline();
    assertTrue(state.stage().cut());
    assertEquals(Stage.CUT_AT_DEADLINE, state.cut().stage(), "cut once");
    assertEquals(Ending.CUT, state.ended(false, false).ending());
    assertNull(state.ending(), "decided only once the socket has closed");
  }

  @Test
  void aSocketThatClosedBeforeItsCloseWasAskedStillHasItsCloseToAsk() {
    CloseState ended = CloseState.OPEN.decide(CloseReason.CLIENT_CLOSED).ended(false, false);
    assertFalse(ended.stage().closeAsked());
    assertEquals(Ending.DRAINED, ended.closeAsked().ending(), "asking keeps how it ended");
  }

  @Test
  void aSocketMovedToASuccessorEndedHandedOverLosingNothing() {
    CloseState state = CloseState.OPEN.decide(CloseReason.SERVER_SHUTDOWN).closeAsked().ended(false, true);
    assertEquals(Ending.HANDED_OVER, state.ending());
    assertEquals(List.of(), state.losses());
  }

  @Test
  void aRequestReachingAnIdleCloseTheServerChoseIsLost() {
    CloseState state = CloseState.OPEN.decideIdle().closeAsked();
    assertEquals(List.of(), state.ended(false, false).losses(), "nothing reached it: closed idle, nothing lost");
    state = state.requestReached();
    assertTrue(state.requestLost());
    assertEquals(Ending.REQUEST_DISCARDED, state.ended(false, false).ending(), "no longer closed idle");
    assertEquals(List.of(RequestLoss.AFTER_CLOSE), state.ended(false, false).losses());
    assertEquals(List.of(RequestLoss.CUT, RequestLoss.AFTER_CLOSE), state.ended(true, false).losses(), "each cause once");
  }

  @Test
  void whatFollowsACloseTheClientCausedIsNotLost() {
    for (CloseReason reason : List.of(CloseReason.CLIENT_CLOSED, CloseReason.UNEXPECTED_EOF, CloseReason.PROTOCOL_ERROR,
        CloseReason.FRAME_TIMEOUT)) {
      CloseState state = CloseState.OPEN.decide(reason).requestReached();
      assertFalse(state.requestLost(), reason.toString());
      assertEquals(List.of(), state.ended(false, false).losses(), reason.toString());
    }
    assertFalse(CloseState.OPEN.requestReached().requestLost(), "nothing decided: a request is just a request");
    assertTrue(CloseState.OPEN.decide(CloseReason.IDLE_EVICTED).requestReached().requestLost(), "gave way: the server chose");
  }
}
