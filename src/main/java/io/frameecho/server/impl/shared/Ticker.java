package io.frameecho.server.impl.shared;

import io.vertx.core.Vertx;

/** The clock and timers for connections and the budget: Vert.x's in production, a virtual one in unit tests. */
public interface Ticker {

  /** A monotonic time in nanoseconds, as {@link System#nanoTime()}. */
  long nanoTime();

  /** Runs {@code task} once after {@code delayMs}, on the caller's context; returns an id for {@link #cancel}. */
  long schedule(long delayMs, Runnable task);

  /** Cancels a task not yet run. */
  void cancel(long id);

  /** The system clock and Vert.x's timers. */
  static Ticker of(Vertx vertx) {
    return new Ticker() {
      @Override
      public long nanoTime() {
        return System.nanoTime();
      }

      @Override
      public long schedule(long delayMs, Runnable task) {
        return vertx.setTimer(delayMs, id -> task.run());
      }

      @Override
      public void cancel(long id) {
        vertx.cancelTimer(id);
      }
    };
  }
}
