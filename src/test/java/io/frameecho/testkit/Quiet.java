package io.frameecho.testkit;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

import java.util.function.LongSupplier;

/** Waits, with a timer and a bound, for a server-side count to stop moving: how tests see a stall. */
public final class Quiet {

  private Quiet() {
  }

  /**
   * Completes with the count once it is above zero and has not moved for {@code quietTicks} checks 100 ms
   * apart (the caller's test timeout bounds the wait).
   */
  public static Future<Long> until(Vertx vertx, LongSupplier count, int quietTicks) {
    Promise<Long> quiet = Promise.promise();
    long[] last = {-1};
    int[] still = {0};
    vertx.setPeriodic(100, id -> {
      long now = count.getAsLong();
      still[0] = now == last[0] && now > 0 ? still[0] + 1 : 0;
      last[0] = now;
      if (still[0] == quietTicks) {
        vertx.cancelTimer(id);
        quiet.complete(now);
      }
    });
    return quiet.future();
  }
}
