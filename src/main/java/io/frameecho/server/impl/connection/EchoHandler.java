package io.frameecho.server.impl.connection;

import io.frameecho.server.RequestHandler;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;

/**
 * The default {@link RequestHandler}: the response is the request. A connection given it never calls it but echoes the
 * request frame's bytes through {@link EchoWriter}, without a copy.
 */
public final class EchoHandler implements RequestHandler {

  @Override
  public Future<Buffer> handle(Buffer request) {
    return Future.succeededFuture(request);
  }
}
