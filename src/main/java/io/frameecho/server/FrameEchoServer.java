package io.frameecho.server;

import io.frameecho.server.impl.Connection;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Objects;

/**
 * A frame-echo server: accepts TCP connections and answers each request frame through a
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
public final class FrameEchoServer {

  private static final Logger log = LoggerFactory.getLogger(FrameEchoServer.class);

  private final Vertx vertx;
  private final FrameEchoOptions options;
  private RequestHandler requestHandler = new EchoHandler();
  private NetServer netServer;

  private FrameEchoServer(Vertx vertx, FrameEchoOptions options) {
    this.vertx = vertx;
    this.options = new FrameEchoOptions(options);
  }

  public static FrameEchoServer create(Vertx vertx, FrameEchoOptions options) {
    return new FrameEchoServer(Objects.requireNonNull(vertx, "vertx"), Objects.requireNonNull(options, "options"));
  }

  /** The application logic; set it before {@link #listen()}. */
  public FrameEchoServer requestHandler(RequestHandler handler) {
    this.requestHandler = Objects.requireNonNull(handler, "handler");
    return this;
  }

  /** Binds the port and starts accepting; the future fails if the port cannot be bound. */
  public Future<FrameEchoServer> listen() {
    if (netServer != null) {
      return Future.failedFuture(new IllegalStateException("already listening"));
    }
    NetServerOptions netOptions = new NetServerOptions()
      .setHost(options.getHost())
      .setPort(options.getPort());
    netServer = vertx.createNetServer(netOptions).connectHandler(this::accept);
    return netServer.listen().map(s -> {
      log.info("frame-echo listening on {}:{} (maxFrameSize={} bytes, writeQueueMaxSize={} bytes, handler={})",
        options.getHost(), s.actualPort(), options.getMaxFrameSize(), options.getWriteQueueMaxSize(), describeHandler());
      return this;
    });
  }

  private String describeHandler() {
    HandlerOptions h = options.getHandler();
    if (HandlerOptions.EVENT_BUS.equals(h.getType()) && requestHandler instanceof EventBusHandler) {
      return "eventbus:" + h.getAddress() + " timeoutMs=" + h.getTimeoutMs() + " maxInFlight=" + h.getMaxInFlight();
    }
    return requestHandler instanceof EchoHandler ? "echo" : requestHandler.getClass().getName();
  }

  /** The book's {@code handle_accept}: every accepted socket becomes a {@link Connection}. */
  private void accept(NetSocket socket) {
    socket.setWriteQueueMaxSize(options.getWriteQueueMaxSize());
    new Connection(socket, requestHandler, options.getMaxFrameSize(), options.getHandler().getMaxInFlight()).start();
  }

  /** The port actually bound (useful with port 0), or 0 before {@link #listen()} has succeeded. */
  public int actualPort() {
    return netServer == null ? 0 : netServer.actualPort();
  }

  /** Stops accepting and closes every connection. */
  public Future<Void> close() {
    return netServer == null ? Future.succeededFuture() : netServer.close();
  }
}
