package io.frameecho.server;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;

import java.util.Objects;

/**
 * Deploys a {@link FrameEchoServer} configured by the verticle's {@code config()} (see
 * {@link FrameEchoOptions} for the keys). The book's {@code main()}: one instance owns one server on its
 * event loop; several instances share the port across event loops.
 * <pre>{@code
 * FrameEchoVerticle verticle = new FrameEchoVerticle();
 * vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(new JsonObject().put("port", 0)))
 *   .onSuccess(id -> System.out.println("frame-echo on port " + verticle.actualPort()));
 * }</pre>
 */
public class FrameEchoVerticle extends VerticleBase {

  private final RequestHandler requestHandler;
  private FrameEchoServer server;

  /** An echo server: what the launcher deploys. */
  public FrameEchoVerticle() {
    this(new EchoHandler());
  }

  /** A server answering with {@code requestHandler}. */
  public FrameEchoVerticle(RequestHandler requestHandler) {
    this.requestHandler = Objects.requireNonNull(requestHandler, "requestHandler");
  }

  @Override
  public Future<?> start() {
    FrameEchoOptions options;
    try {
      options = new FrameEchoOptions(config());
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(new IllegalArgumentException("invalid frame-echo configuration: " + e.getMessage()));
    }
    server = FrameEchoServer.create(vertx, options).requestHandler(requestHandler);
    return server.listen();
  }

  @Override
  public Future<?> stop() {
    return server == null ? Future.succeededFuture() : server.close();
  }

  /** The port this instance bound, once deployed; 0 before. */
  public int actualPort() {
    return server == null ? 0 : server.actualPort();
  }
}
