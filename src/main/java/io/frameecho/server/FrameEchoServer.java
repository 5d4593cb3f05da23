package io.frameecho.server;

import io.frameecho.server.impl.FrameEchoServerImpl;
import io.frameecho.server.impl.ops.Operations;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.ServerSSLOptions;

/**
 * A frame-echo server: accepts TCP (or TLS) connections and answers each request frame through a
 * {@link RequestHandler} (the built-in echo unless told otherwise).
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

  /**
   * Certificate rotation without a restart: new TLS handshakes use {@code tls} (Vert.x's own options: PEM files, a
   * PKCS12 or JKS store, trust, {@code clientAuth}, ...; copied), while open connections and handshakes under way
   * keep what they have. The files it names are read now, on a worker thread: the future fails with the reason if
   * they do not load, and the server then keeps its current certificate. Fails on a server that does not serve TLS.
   * (Vert.x builds a TLS context per key material: a rotation that changes only {@code clientAuth}, protocols or
   * cipher suites, with the same key and trust, may keep the context the server had.)
   */
  Future<Void> updateTls(ServerSSLOptions tls);

  /**
   * Reads the TLS files the server's options name again (a certificate renewed on disk, under the same names) and
   * uses them for new handshakes, as {@link #updateTls} does; the runnable jar calls it on SIGHUP.
   */
  Future<Void> reloadTls();

  /**
   * {@link #reloadTls()} on every TLS server listening in {@code vertx} (every instance of every deployment): completes
   * with how many there are, or fails with the first reason one could not reload (that one keeps its certificate).
   */
  static Future<Integer> reloadTls(Vertx vertx) {
    return FrameEchoServerImpl.reloadAllTls(vertx);
  }

  /**
   * Whether the frame-echo servers of {@code vertx} would serve a new client now, as {@code /health/ready} answers
   * (any thread): one listens and none is draining, and one has room for a newcomer (a free slot of
   * {@code maxConnections} or an idle connection to give way, and, for an event-bus handler, a consumer at its address).
   * For an application that runs its own health checks.
   */
  static Future<Boolean> ready(Vertx vertx) {
    return Operations.ready(vertx);
  }

  /** The port actually bound (useful with port 0), or 0 before {@link #listen()} has succeeded; -1 on a unix socket. */
  int actualPort();

  /**
   * Graceful shutdown: stops accepting, closes at once the connections that owe nothing, gives one accepted moments
   * before and silent so far a short grace for its first request, lets every other connection answer the frames it
   * has received and flush them, and after {@code shutdownTimeoutMs} cuts what remains. Logs how many were drained,
   * closed idle and cut. Completes once the port is unbound and every connection has closed. With {@code
   * handoverSocket} and a successor listening there, a connection that owes nothing moves to the successor instead of
   * closing (its client sees no close), and the line counts those handed over.
   */
  Future<Void> shutdown();

  /** Stops accepting and closes every connection at once; completes once the port is unbound. */
  Future<Void> close();

  /**
   * Graceful shutdown after telling load balancers first: readiness turns false now, the server keeps
   * accepting for {@code drainDelayMs}, then {@link #shutdown()}.
   */
  Future<Void> drainAndShutdown();
}
