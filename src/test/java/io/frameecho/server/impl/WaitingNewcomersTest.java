package io.frameecho.server.impl;

import io.frameecho.testkit.VirtualTicker;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Newcomers wait for a timer (which Netty runs only after a poll of the sockets that follows the timer's setting),
 * then are decided in arrival order; a timer decides only those who were waiting when it was set.
 */
class WaitingNewcomersTest {

  private final VirtualTicker ticker = new VirtualTicker();
  private final List<String> decided = new ArrayList<>();
  private final WaitingNewcomers<String> newcomers = new WaitingNewcomers<>(ticker,
    (newcomer, arrivedNanos) -> decided.add(newcomer + "@" + arrivedNanos));

  @Test
  void aTimerDecidesThoseWaitingWhenItWasSetWithTheirArrivalTimes() {
    long first = ticker.nanoTime();
    newcomers.add("a");
    assertEquals(List.of(), decided, "nothing decided before the timer");
    assertEquals(1, ticker.pending());
    ticker.advance(1);
    assertEquals(List.of("a@" + first), decided);
    assertEquals(0, newcomers.size());
    assertEquals(0, ticker.pending(), "no timer while nobody waits");
  }

  @Test
  void aNewcomerWhoArrivesAfterTheTimerWasSetWaitsForTheNextOne() {
    long first = ticker.nanoTime();
    newcomers.add("a");
    // Arrives while a's timer is pending: that timer may run in the same batch, before any poll after b arrived.
    newcomers.add("b");
    assertEquals(1, ticker.pending(), "one timer at a time");
    ticker.advance(1);
    assertEquals(List.of("a@" + first), decided);
    assertEquals(1, newcomers.size());
    ticker.advance(1);
    assertEquals(List.of("a@" + first, "b@" + first), decided, "b in a timer set after it arrived");
    assertEquals(0, newcomers.size());
  }

  @Test
  void whenTheServerStopsThoseWaitingAreHandedBackAndNeverDecided() {
    newcomers.add("a");
    newcomers.add("b");
    assertEquals(List.of("a", "b"), newcomers.removeAll());
    assertEquals(0, ticker.pending(), "the timer is cancelled");
    ticker.advance(10);
    assertEquals(List.of(), decided);
    newcomers.add("c");
    ticker.advance(1);
    assertEquals(1, decided.size(), "a newcomer after that has a timer of its own");
  }
}
