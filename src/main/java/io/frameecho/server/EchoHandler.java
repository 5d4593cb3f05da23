package io.frameecho.server;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;

/** The book's application logic: the response is the request. */
public final class EchoHandler implements RequestHandler {

  @Override
  public Future<Buffer> handle(Buffer request) {
    return Future.succeededFuture(request);
  }
}
