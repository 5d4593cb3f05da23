package io.frameecho.server.impl;

import io.frameecho.server.impl.connection.EchoHandler;
import io.frameecho.server.impl.connection.ActivityOrder;
import io.frameecho.server.impl.shared.ConnectionLimits;
import io.frameecho.testkit.VirtualTicker;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A server's answer to readiness from its limits and its activity order. (An idle connection that could give way,
 * and an event-bus address without a consumer: io.frameecho.ops.ReadinessTest, over the metrics endpoint.)
 */
class ReadinessTest {

  private final Vertx vertx = Vertx.vertx();
  private final ActivityOrder order = new ActivityOrder(new VirtualTicker(), 1000);

  @AfterEach
  void close() throws Exception {
    await(vertx.close());
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private Readiness readiness(ConnectionLimits limits) {
    return new Readiness(new EchoHandler(), limits, order, vertx.getOrCreateContext(), () -> false);
  }

  @Test
  void readyWhileASlotIsFreeAndNotOnceEveryOneIsTakenWithNobodyToGiveWay() throws Exception {
    ConnectionLimits limits = ConnectionLimits.attach(vertx, 2, 0, 1 << 20, 1000);
    Readiness readiness = readiness(limits);
    assertTrue(await(readiness.get()), "no connection yet");
    limits.tryAcquire("127.0.0.1");
    assertTrue(await(readiness.get()), "one slot of two taken");
    limits.tryAcquire("127.0.0.1");
    assertEquals(2, limits.openConnections());
    assertFalse(await(readiness.get()), "every slot taken, no connection in the order to give way");
    limits.detach(vertx);
  }

  @Test
  void readyWithoutAConnectionLimit() throws Exception {
    ConnectionLimits limits = ConnectionLimits.attach(vertx, 0, 0, 1 << 20, 1000);
    limits.tryAcquire("127.0.0.1");
    assertTrue(await(readiness(limits).get()));
    limits.detach(vertx);
  }
}
