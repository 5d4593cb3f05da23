package io.frameecho.server;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;

/**
 * The application: what to answer to one request frame. The book's {@code try_one_request}, less the
 * parsing.
 * <p>
 * It is called on the connection's event loop, once per request frame, in order. It must not block; work
 * that blocks or takes long returns a future completed later (from a worker, the event bus, ...). Answers
 * may complete in any order: the connection still writes them in request order. A failed future ends the
 * connection after the responses to the earlier requests, since the protocol has no error frame; so does a
 * {@code null} future or a future completed with {@code null} (with one WARN line saying so).
 * <p>
 * Any handler replaces the built-in echo, which the server answers without a handler: with the request frame's own
 * bytes, header included, and without a copy. With a length field at an offset (the {@code framing} key), an answer
 * gets its request's bytes before the field, as the echo does, unless the handler sees and writes whole frames
 * ({@code stripHeader} false).
 */
@FunctionalInterface
public interface RequestHandler {

  /**
   * @param request the request frame's payload; the handler may keep it or return it as the response
   * @return the response payload
   */
  Future<Buffer> handle(Buffer request);
}
