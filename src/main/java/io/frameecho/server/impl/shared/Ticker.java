package io.frameecho.server.impl.shared;

import io.vertx.core.Vertx;

/**
 * Where the connection's clocks and the budget's check read the time and set their timers: Vert.x's timers
 * in production ({@link #of(Vertx)}), a virtual clock that a test advances in its unit tests (as Netty's
 * {@code Ticker} serves {@code IdleStateHandler}).
 */
public interface Ticker {

  /** A monotonic time in nanoseconds, as {@link System#nanoTime()}. */
  long nanoTime();

  /** Runs {@code task} once after {@code delayMs}, on the caller's context; returns an id for {@link #cancel}. */
  long schedule(long delayMs, Runnable task);

  /** Cancels a task not yet run; nothing when it has run or was cancelled. */
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
