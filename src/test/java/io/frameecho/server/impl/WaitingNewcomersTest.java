package io.frameecho.server.impl;

import io.frameecho.testkit.VirtualTicker;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Newcomers wait for a timer (which Netty runs after its next poll of the sockets), then are decided in arrival order. */
class WaitingNewcomersTest {

  private final VirtualTicker ticker = new VirtualTicker();
  private final List<String> decided = new ArrayList<>();
  private final WaitingNewcomers<String> newcomers = new WaitingNewcomers<>(ticker,
    (newcomer, arrivedNanos) -> decided.add(newcomer + "@" + arrivedNanos));

  @Test
  void newcomersAreDecidedTogetherByOneTimerWithTheirArrivalTimes() {
    long first = ticker.nanoTime();
    newcomers.add("a");
    newcomers.add("b");
    assertEquals(List.of(), decided, "nothing decided before the timer");
    assertEquals(1, ticker.pending(), "one timer for all who wait");
    assertEquals(2, newcomers.size());
    ticker.advance(1);
    assertEquals(List.of("a@" + first, "b@" + first), decided);
    assertEquals(0, newcomers.size());

    long later = ticker.nanoTime();
    newcomers.add("c");
    ticker.advance(1);
    assertEquals(List.of("a@" + first, "b@" + first, "c@" + later), decided, "a later newcomer gets a timer of its own");
  }

  @Test
  void whenTheServerStopsThoseWaitingAreHandedBackAndNeverDecided() {
    newcomers.add("a");
    newcomers.add("b");
    assertEquals(List.of("a", "b"), newcomers.removeAll());
    assertEquals(0, ticker.pending(), "the timer is cancelled");
    ticker.advance(10);
    assertEquals(List.of(), decided);
    assertEquals(0, newcomers.size());
  }
}
