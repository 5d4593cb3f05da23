package io.frameecho.server.impl.connection;

import io.frameecho.server.impl.connection.ReadGate.Reason;
import org.junit.jupiter.api.Test;

import static io.frameecho.server.impl.connection.ReadGate.Reason.OVER_BUFFER_BUDGET;
import static io.frameecho.server.impl.connection.ReadGate.Reason.TOO_MANY_IN_FLIGHT;
import static io.frameecho.server.impl.connection.ReadGate.Reason.WRITE_QUEUE_FULL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReadGateTest {

  private final ReadGate gate = new ReadGate();

  @Test
  void startsOpen() {
    assertTrue(gate.isOpen());
    assertFalse(gate.isShut());
    for (Reason reason : Reason.values()) {
      assertFalse(gate.isPausedFor(reason));
      assertFalse(gate.isPausedForOtherThan(reason));
    }
  }

  @Test
  void eachReasonAloneClosesTheGateAndOpensItWhenCleared() {
    for (Reason reason : Reason.values()) {
      assertTrue(gate.pause(reason), reason.name());
      assertFalse(gate.isOpen(), reason.name());
      for (Reason other : Reason.values()) {
        assertEquals(other == reason, gate.isPausedFor(other), reason + " / " + other);
      }
      assertTrue(gate.resume(reason), reason.name());
      assertTrue(gate.isOpen(), reason.name());
      assertFalse(gate.isPausedFor(reason), reason.name());
    }
  }

  @Test
  void gateOpensOnlyWhenTheLastReasonClears() {
    assertTrue(gate.pause(WRITE_QUEUE_FULL));
    assertTrue(gate.pause(OVER_BUFFER_BUDGET), "a second reason is new, though the gate was closed already");

    assertFalse(gate.resume(WRITE_QUEUE_FULL));
    assertFalse(gate.isOpen());
    assertTrue(gate.isPausedFor(OVER_BUFFER_BUDGET));

    assertTrue(gate.resume(OVER_BUFFER_BUDGET));
    assertTrue(gate.isOpen());
  }

  @Test
  void pausingTwiceForOneReasonIsIdempotent() {
    assertTrue(gate.pause(TOO_MANY_IN_FLIGHT));
    assertFalse(gate.pause(TOO_MANY_IN_FLIGHT));
    assertTrue(gate.resume(TOO_MANY_IN_FLIGHT), "one resume clears it however often it was paused");
    assertTrue(gate.isOpen());
  }

  @Test
  void resumingAReasonNotSetChangesNothing() {
    assertFalse(gate.resume(WRITE_QUEUE_FULL));
    assertTrue(gate.isOpen());

    gate.pause(TOO_MANY_IN_FLIGHT);
    assertFalse(gate.resume(WRITE_QUEUE_FULL));
    assertFalse(gate.isOpen());
    assertTrue(gate.isPausedFor(TOO_MANY_IN_FLIGHT));
  }

  @Test
  void pausedForOtherThanIgnoresTheReasonAsked() {
    gate.pause(OVER_BUFFER_BUDGET);
    assertFalse(gate.isPausedForOtherThan(OVER_BUFFER_BUDGET));
    assertTrue(gate.isPausedForOtherThan(WRITE_QUEUE_FULL));

    gate.pause(WRITE_QUEUE_FULL);
    assertTrue(gate.isPausedForOtherThan(OVER_BUFFER_BUDGET));
    assertTrue(gate.isPausedForOtherThan(WRITE_QUEUE_FULL));

    gate.resume(OVER_BUFFER_BUDGET);
    assertFalse(gate.isPausedForOtherThan(WRITE_QUEUE_FULL));
  }

  /** The gate only keeps reasons: shut or not, resume reports the last one cleared; the connection reads isShut. */
  @Test
  void shutKeepsTheReasonsAndResumeStillReportsTheLastCleared() {
    gate.pause(WRITE_QUEUE_FULL);
    gate.shut();
    assertTrue(gate.isShut());
    assertTrue(gate.isPausedFor(WRITE_QUEUE_FULL));

    assertTrue(gate.resume(WRITE_QUEUE_FULL));
    assertTrue(gate.isOpen(), "isOpen means no reason stands, not that reading may start");
    assertTrue(gate.isShut(), "a shut gate stays shut");
    assertTrue(gate.pause(TOO_MANY_IN_FLIGHT), "reasons are still kept once shut");
  }

  @Test
  void clearTellsWhetherReasonsStood() {
    assertFalse(gate.clear());

    gate.pause(WRITE_QUEUE_FULL);
    gate.pause(TOO_MANY_IN_FLIGHT);
    gate.shut();
    assertTrue(gate.clear());
    assertTrue(gate.isOpen());
    assertFalse(gate.isPausedFor(WRITE_QUEUE_FULL));
    assertFalse(gate.resume(TOO_MANY_IN_FLIGHT), "nothing left to resume");
    assertTrue(gate.isShut(), "clearing the reasons does not reopen a shut gate");
    assertFalse(gate.clear());
  }
}
