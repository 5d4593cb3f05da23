package io.frameecho.server.impl.connection;

import io.frameecho.server.RequestHandler;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;

/**
 * The book's logic, the server's default: the response is the request. A connection given this handler does not call
 * it; it answers with the request frame's own bytes through {@link EchoWriter}, without a copy. Any other
 * {@link RequestHandler} replaces the echo.
 */
public final class EchoHandler implements RequestHandler {

  @Override
  public Future<Buffer> handle(Buffer request) {
    return Future.succeededFuture(request);
  }
}
