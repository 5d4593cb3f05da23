package io.frameecho.server.impl;

import io.frameecho.server.RequestHandler;
import io.frameecho.server.impl.connection.ActivityOrder;
import io.frameecho.server.impl.shared.ConnectionLimits;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;

import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * One listening server's answer to readiness ({@code FrameEchoServer.ready}): whether a newcomer would be served now.
 * Its event-bus address, if it answers through one, has a consumer; and a slot is free, or (asked on the server's event
 * loop, only when every slot is taken) an idle connection could give way while the server is not stopping. Asked from
 * any thread; it reads the server's connections on their event loop only.
 */
final class Readiness implements Supplier<Future<Boolean>> {

  private final RequestHandler handler;
  private final ConnectionLimits limits;
  private final ActivityOrder order;
  /** The server's event loop, where its activity order is read. */
  private final Context context;
  private final BooleanSupplier stopping;

  Readiness(RequestHandler handler, ConnectionLimits limits, ActivityOrder order, Context context, BooleanSupplier stopping) {
    this.handler = handler;
    this.limits = limits;
    this.order = order;
    this.context = context;
    this.stopping = stopping;
  }

  @Override
  public Future<Boolean> get() {
    if (handler instanceof EventBusHandler eventBus && !eventBus.hasConsumer()) {
      return Future.succeededFuture(false);
    }
    int max = limits.maxConnections();
    if (max == 0 || limits.openConnections() < max) {
      return Future.succeededFuture(true);
    }
    Promise<Boolean> answer = Promise.promise();
    context.runOnContext(v -> answer.complete(!stopping.getAsBoolean() && order.idlest() != null));
    return answer.future();
  }
}
