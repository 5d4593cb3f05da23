package io.frameecho.example;

import io.frameecho.server.RequestHandler;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;

/**
 * Answers each request with its payload's ASCII letters upper-cased: the jar's example of changing the answer with
 * no code outside it ({@code "handler": {"type": "io.frameecho.example.UpperCaseHandler"}}, or
 * {@code FRAME_ECHO_HANDLER_TYPE=io.frameecho.example.UpperCaseHandler}).
 */
public class UpperCaseHandler implements RequestHandler {

  /** The handler {@code handler.type} names; Vert.x-style, by its no-argument constructor. */
  public UpperCaseHandler() {
  }

  @Override
  public Future<Buffer> handle(Buffer request) {
    return Future.succeededFuture(UpperCaseConsumer.upperCase(request));
  }
}
