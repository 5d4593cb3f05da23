package io.frameecho.server;

import io.frameecho.server.impl.FrameEchoServerImpl;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

/**
 * A frame-echo server: accepts TCP (or TLS) connections and answers each request frame through a
 * {@link RequestHandler} ({@link EchoHandler} unless told otherwise).
 * <pre>{@code
 * FrameEchoServer.create(vertx, new FrameEchoOptions().setPort(0))
 *   .requestHandler(request -> Future.succeededFuture(request))
 *   .listen()
 *   .onSuccess(server -> System.out.println("port " + server.actualPort()));
 * }</pre>
 * Create it on the event loop that should own its connections, typically in a verticle's {@code start};
 * {@link FrameEchoVerticle} does exactly that.
 */
public interface FrameEchoServer {

  /** A server with {@code options} (copied), not listening yet. */
  static FrameEchoServer create(Vertx vertx, FrameEchoOptions options) {
    return new FrameEchoServerImpl(vertx, options);
  }

  /**
   * Reads and checks the TLS key material {@code options} name (files read, keys and trust stores loaded, passwords
   * tried), as {@link #listen()} does, binding nothing: it fails with the reason when they would not load. Succeeds at
   * once when {@code options} serve plain TCP.
   */
  static Future<Void> checkTls(Vertx vertx, FrameEchoOptions options) {
    return FrameEchoServerImpl.checkTls(vertx, options);
  }

  /** The application logic; set it before {@link #listen()}. */
  FrameEchoServer requestHandler(RequestHandler handler);

  /**
   * Where the connections report their events (requests, responses, rejections, closes and their reasons),
   * instead of the built-in meters that {@code metrics.enabled} turns on; set it before {@link #listen()}.
   */
  FrameEchoServer metrics(FrameEchoMetrics metrics);

  /** Binds the port and starts accepting; the future fails if the port cannot be bound or TLS files are missing. */
  Future<FrameEchoServer> listen();

  /** The port actually bound (useful with port 0), or 0 before {@link #listen()} has succeeded. */
  int actualPort();

  /**
   * Graceful shutdown: stops accepting, lets every connection answer the frames it has received and flush
   * them, and after {@code shutdownTimeoutMs} cuts what remains. Logs how many were drained and cut.
   */
  Future<Void> shutdown();

  /** Stops accepting and closes every connection at once. */
  Future<Void> close();

  /**
   * Graceful shutdown after telling load balancers first: readiness turns false now, the server keeps
   * accepting for {@code drainDelayMs}, then {@link #shutdown()}.
   */
  Future<Void> drainAndShutdown();
}
