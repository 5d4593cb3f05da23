package io.frameecho.server.impl;

import io.frameecho.server.impl.shared.Ticker;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Newcomers that found every slot of {@code maxConnections} taken, waiting for the event loop to poll its sockets
 * once more before a connection gives way to one of them. A connection's quiet time runs from the last read the loop
 * processed: while the loop lags (a flood of connects queues thousands of accepts ahead of its next poll), an active
 * client's next request can sit unread in the kernel, and its connection would look idle. The decision runs from a
 * timer, and Netty runs a timer that falls due only in a batch of tasks after a poll of its sockets: by then such a
 * request has been read, and a connection still quiet since before the newcomer arrived really was quiet. A timer
 * decides only the newcomers that were waiting when it was set: one that arrives after may come in the batch that
 * runs the timer, before any poll, and waits for the next timer. On the server's event
 * loop only.
 *
 * @param <N> a newcomer: its socket and its address
 */
final class WaitingNewcomers<N> {

  /** Decides for one newcomer that arrived at {@code arrivedNanos}, on the {@link Ticker}'s clock. */
  interface Decision<N> {
    void decide(N newcomer, long arrivedNanos);
  }

  private record Waiting<N>(N newcomer, long arrivedNanos) {
  }

  private final Ticker ticker;
  private final Decision<N> decision;
  private final ArrayDeque<Waiting<N>> waiting = new ArrayDeque<>();
  /** The pending timer's id; -1 when none is set. */
  private long timer = -1;
  /** How many of those waiting (the first ones) arrived before the pending timer was set. */
  private int covered;

  WaitingNewcomers(Ticker ticker, Decision<N> decision) {
    this.ticker = ticker;
    this.decision = decision;
  }

  /** {@code newcomer} waits for the decision, which comes after the loop's next poll of its sockets. */
  void add(N newcomer) {
    waiting.add(new Waiting<>(newcomer, ticker.nanoTime()));
    if (timer < 0) {
      setTimer();
    }
  }

  private void setTimer() {
    covered = waiting.size();
    // Vert.x's shortest timer: what matters is that it runs after a poll, not how soon.
    timer = ticker.schedule(1, this::decideCovered);
  }

  /** How many wait now. */
  int size() {
    return waiting.size();
  }

  private void decideCovered() {
    timer = -1;
    // In arrival order; those who came after the timer was set wait for one of their own.
    for (int n = covered; n > 0; n--) {
      Waiting<N> next = waiting.poll();
      decision.decide(next.newcomer(), next.arrivedNanos());
    }
    if (!waiting.isEmpty()) {
      setTimer();
    }
  }

  /** Every newcomer still waiting, who will not be decided here: the server is stopping. */
  List<N> removeAll() {
    if (timer >= 0) {
      ticker.cancel(timer);
      timer = -1;
    }
    covered = 0;
    List<N> all = new ArrayList<>(waiting.size());
    waiting.forEach(w -> all.add(w.newcomer()));
    waiting.clear();
    return all;
  }
}
