package io.frameecho.server.impl;

import io.frameecho.testkit.VirtualTicker;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Shutdowns run in order, a batch per timer, none in the turn that asked. */
class ShutdownPacerTest {

  private final VirtualTicker ticker = new VirtualTicker();
  private final ShutdownPacer pacer = new ShutdownPacer(ticker);
  private final List<Integer> ran = new ArrayList<>();

  @Test
  void thousandsRunABatchPerTurnInOrder() {
    int count = ShutdownPacer.PER_TURN * 3 + 5;
    for (int i = 0; i < count; i++) {
      int n = i;
      pacer.accept(() -> ran.add(n));
    }
    assertEquals(List.of(), ran, "not in the turn that asked");
    assertEquals(1, ticker.pending(), "one timer for them all");
    for (int batch = 1; batch <= 3; batch++) {
      ticker.advance(1);
      assertEquals(ShutdownPacer.PER_TURN * batch, ran.size());
    }
    ticker.advance(1);
    assertEquals(count, ran.size());
    for (int i = 0; i < count; i++) {
      assertEquals(i, ran.get(i));
    }
    assertEquals(0, ticker.pending(), "no timer left");
    assertEquals(0, pacer.waiting());
  }

  @Test
  void oneAskedLaterIsRunInTheNextBatch() {
    pacer.accept(() -> ran.add(1));
    ticker.advance(1);
    pacer.accept(() -> ran.add(2));
    assertEquals(List.of(1), ran);
    ticker.advance(1);
    assertEquals(List.of(1, 2), ran);
  }
}
