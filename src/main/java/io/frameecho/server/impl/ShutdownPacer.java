package io.frameecho.server.impl;

import io.frameecho.server.impl.shared.Ticker;

import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * Spreads shutdown over the event loop's turns: Vert.x tells every connection at once (one task each, queued
 * together), and a loop that closed thousands in a row answered nobody meanwhile (5,000 took 1 to 2.5 s), while the
 * requests that arrived in that time met a closing connection. Each connection's shutdown runs in a batch of at most
 * {@link #PER_TURN}, one batch per timer, so the loop reads its sockets between batches, and a connection decides
 * to close having read what its client had sent. On the server's event loop only.
 */
final class ShutdownPacer implements Consumer<Runnable> {

  /** Connections told per turn: each closes in about 0.1 ms (a FIN, a read, a close), so a batch takes a few ms. */
  static final int PER_TURN = 64;

  private final Ticker ticker;
  private final ArrayDeque<Runnable> waiting = new ArrayDeque<>();
  private boolean scheduled;

  ShutdownPacer(Ticker ticker) {
    this.ticker = ticker;
  }

  /** Runs {@code shutdown} in a later turn, after those asked before it. */
  @Override
  public void accept(Runnable shutdown) {
    waiting.add(shutdown);
    if (!scheduled) {
      scheduled = true;
      // A timer, not a task: due timers run after the loop's next look at its sockets, queued tasks before it.
      ticker.schedule(1, this::runBatch);
    }
  }

  private void runBatch() {
    for (int i = 0; i < PER_TURN && !waiting.isEmpty(); i++) {
      waiting.poll().run();
    }
    if (waiting.isEmpty()) {
      scheduled = false;
    } else {
      ticker.schedule(1, this::runBatch);
    }
  }

  /** Shutdowns not run yet. */
  int waiting() {
    return waiting.size();
  }
}
