package io.frameecho.server;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;

/**
 * Answers each request frame with the reply to an event-bus request: the payload goes as a
 * {@code Buffer} body to an address (served on any node of a clustered Vert.x), and the reply's body,
 * which must be a {@code Buffer}, is the response payload. A timeout or a failure reply fails the answer,
 * which ends that connection after the earlier responses.
 */
public final class EventBusHandler implements RequestHandler {

  private final Vertx vertx;
  private final String address;
  private final DeliveryOptions delivery;

  public EventBusHandler(Vertx vertx, String address, long timeoutMs) {
    this.vertx = vertx;
    this.address = address;
    this.delivery = new DeliveryOptions().setSendTimeout(timeoutMs);
  }

  @Override
  public Future<Buffer> handle(Buffer request) {
    return vertx.eventBus().request(address, request, delivery).compose(reply -> {
      Object body = reply.body();
      if (body instanceof Buffer) {
        return Future.succeededFuture((Buffer) body);
      }
      return Future.failedFuture(new IllegalStateException("the reply from " + address + " is not a Buffer but "
        + (body == null ? "null" : body.getClass().getName())));
    });
  }
}
