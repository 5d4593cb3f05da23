package io.frameecho.server.impl;

import io.frameecho.server.impl.connection.CloseState.Ending;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Shutdown's accounting: endings counted once shutdown has begun, done when the last connection has closed. */
class DrainTest {

  private final List<String> cut = new ArrayList<>();
  private final Drain<String> drain = new Drain<>(cut::add);

  @Test
  void endingsBeforeShutdownAreNotCounted() {
    drain.opened("a");
    drain.closed("a", Ending.CUT);
    drain.begin();
    drain.completeIfEmpty();
    assertTrue(drain.allClosed().isComplete());
    assertEquals("0 connection(s) drained, 0 closed idle, 0 lost a request, 0 cut", Drain.summary(java.util.Arrays.stream(drain.counts()).asLongStream().toArray()));
  }

  @Test
  void eachEndingIsCountedAndTheLastCloseCompletes() {
    drain.opened("a");
    drain.opened("b");
    drain.opened("c");
    drain.begin();
    drain.completeIfEmpty();
    drain.closed("a", Ending.DRAINED);
    drain.closed("b", Ending.CLOSED_IDLE);
    assertFalse(drain.allClosed().isComplete());
    drain.opened("d");
    drain.closed("d", Ending.REQUEST_DISCARDED);
    drain.closed("c", Ending.CUT);
    assertTrue(drain.allClosed().isComplete());
    assertEquals("1 connection(s) drained, 1 closed idle, 1 lost a request, 1 cut", Drain.summary(java.util.Arrays.stream(drain.counts()).asLongStream().toArray()));
  }

  @Test
  void theDeadlineCutsWhatIsStillOpen() {
    drain.opened("a");
    drain.opened("b");
    drain.closed("a", Ending.DRAINED);
    drain.begin();
    drain.cutAll();
    assertEquals(List.of("b"), cut);
  }
}
