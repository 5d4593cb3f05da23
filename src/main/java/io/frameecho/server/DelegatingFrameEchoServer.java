package io.frameecho.server;

import io.frameecho.server.impl.FrameEchoServerImpl;
import io.vertx.core.Future;
import io.vertx.core.net.ServerSSLOptions;

/**
 * The {@link FrameEchoServer} that {@link FrameEchoServer#create} returns: each call goes to the implementation,
 * which knows nothing of the facade (so {@code server.impl} never imports it); calls that return the server return
 * this one.
 */
final class DelegatingFrameEchoServer implements FrameEchoServer {

  private final FrameEchoServerImpl server;

  DelegatingFrameEchoServer(FrameEchoServerImpl server) {
    this.server = server;
  }

  @Override
  public FrameEchoServer requestHandler(RequestHandler handler) {
    server.requestHandler(handler);
    return this;
  }

  @Override
  public FrameEchoServer metrics(FrameEchoMetrics metrics) {
    server.metrics(metrics);
    return this;
  }

  @Override
  public Future<FrameEchoServer> listen() {
    return server.listen().map(this);
  }

  @Override
  public Future<Void> updateTls(ServerSSLOptions tls) {
    return server.updateTls(tls);
  }

  @Override
  public Future<Void> reloadTls() {
    return server.reloadTls();
  }

  @Override
  public int actualPort() {
    return server.actualPort();
  }

  @Override
  public Future<Void> shutdown() {
    return server.shutdown();
  }

  @Override
  public Future<Void> close() {
    return server.close();
  }

  @Override
  public Future<Void> drainAndShutdown() {
    return server.drainAndShutdown();
  }
}
