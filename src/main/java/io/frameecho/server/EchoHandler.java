package io.frameecho.server;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;

/**
 * The book's application logic: the response is the request. The server's default handler.
 * <p>
 * <b>The server does not call {@link #handle} for it.</b> When the handler is an {@code EchoHandler}, each connection
 * answers with the request frame's own bytes, header included, without a copy and without a {@link Buffer} per request:
 * the zero-copy fast path in {@code io.frameecho.server.impl.connection.EchoWriter}, chosen once per connection in
 * {@code Connection.start}. Editing this method therefore changes nothing on the wire. To answer something else
 * (upper-case the echo, say), give the server a {@link RequestHandler} of your own, which replaces the echo and runs on
 * the application path ({@code OrderedAnswers}):
 * <pre>{@code
 * RequestHandler upperCase = request -> Future.succeededFuture(Buffer.buffer(request.toString().toUpperCase()));
 * FrameEchoServer.create(vertx, options).requestHandler(upperCase).listen();
 * }</pre>
 * This method answers as the fast path does, for code that calls a handler itself.
 */
public final class EchoHandler implements RequestHandler {

  @Override
  public Future<Buffer> handle(Buffer request) {
    return Future.succeededFuture(request);
  }
}
