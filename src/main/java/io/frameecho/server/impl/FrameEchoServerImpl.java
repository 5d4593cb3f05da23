package io.frameecho.server.impl;

import io.frameecho.server.impl.connection.EchoHandler;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.FrameEchoServer;
import io.frameecho.server.MetricsOptions;
import io.frameecho.server.RequestHandler;
import io.frameecho.server.impl.connection.AcceptedSocket;
import io.frameecho.server.impl.connection.ActivityOrder;
import io.frameecho.server.impl.connection.Connection;
import io.frameecho.server.impl.netty.ChannelSocket;
import io.frameecho.server.impl.netty.Handover;
import io.frameecho.server.impl.netty.ProxyProtocol;
import io.frameecho.server.impl.netty.Internals;
import io.frameecho.server.impl.netty.Listener;
import io.frameecho.server.impl.ops.Operations;
import io.frameecho.server.impl.ops.OperationsEndpoint;
import io.frameecho.server.impl.shared.ConnectionLimits;
import io.frameecho.server.impl.shared.ServedAddresses;
import io.frameecho.server.impl.shared.SocketPaths;
import io.frameecho.server.impl.shared.Ticker;
import io.vertx.core.Context;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.deployment.DeploymentContext;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.SSLEngineOptions;
import io.vertx.core.net.ServerSSLOptions;
import io.vertx.core.net.SocketAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The server behind the {@code FrameEchoServer} facade, which delegates to it: its lifecycle (listen, shutdown,
 * close) and TLS, on the event loop it was created on. Who is admitted is {@link Admission}'s, how shutdown's
 * connections ended {@link Drain}'s, what start-up says {@link StartupChecks}', the answer to readiness {@link
 * Readiness}'. Its connections' limits and budget are the deployment's ({@link ConnectionLimits}).
 */
public final class FrameEchoServerImpl implements FrameEchoServer {

  /** The facade's logger name ({@code io.frameecho.server.FrameEchoServer}): the one operators configure and see on the listening and shutdown lines. */
  public static final String LOGGER = "io.frameecho.server.FrameEchoServer";
  private static final Logger log = LoggerFactory.getLogger(LOGGER);

  private final Vertx vertx;
  /** The event loop this server runs on. */
  private final io.vertx.core.Context context;
  private final FrameEchoOptions options;
  /** Shared with the other instances of this server's deployment; attached while listening. */
  private ConnectionLimits limits;
  private boolean detached;
  private final Operations operations;
  private RequestHandler requestHandler = new EchoHandler();
  /** Where connections report: the application's ({@link #metrics}), or the built-in meters decided at listen. */
  private FrameEchoMetrics metrics;
  private NetServer netServer;
  /** The TLS handshakes under way, or null for plain TCP. */
  private Tls handshakes;
  /** The PROXY protocol headers awaited, or null without {@code useProxyProtocol}. */
  private ProxyProtocol proxyProtocol;
  /** The clock and timers of this server's connections and of its activity order. */
  private final Ticker ticker;
  /** This instance's connections from the least to the most recently active; on its event loop only. */
  private final ActivityOrder order;
  /** Who is served, waits or is turned away; created at listen. */
  private Admission admission;
  /** Open connections of this server instance, and how they ended once shutdown began. */
  private final Drain<Connection> drain = new Drain<>(Connection::cut);
  /** Spreads Vert.x's shutdown of the connections over the event loop's turns. */
  private final ShutdownPacer shutdownPacer;
  private Future<Void> shutdown;
  /** This server's answer to readiness, registered while it listens; made with the limits. */
  private Readiness readiness;
  /** The listening channel, learned from the first connection it accepted; null before. */
  private Listener listener;
  /** The address this server claimed in {@link ServedAddresses}, or null (port 0, or not claimed). */
  private String servedAddress;
  /** Runs a task on this server's event loop later: one for its connections. */
  private Executor onLoop;
  /** The restart with handover {@code handoverSocket} asks for, or null. */
  private Handover handover;

  public FrameEchoServerImpl(Vertx vertx, FrameEchoOptions options) {
    this.vertx = Objects.requireNonNull(vertx, "vertx");
    this.context = vertx.getOrCreateContext();
    this.options = new FrameEchoOptions(Objects.requireNonNull(options, "options"));
    this.operations = Operations.shared(vertx, Internals.transportName(vertx));
    this.ticker = Ticker.of(vertx);
    this.order = new ActivityOrder(ticker, this.options.getIdleGiveWayMs());
    this.shutdownPacer = new ShutdownPacer(ticker);
  }

  @Override
  public FrameEchoServer requestHandler(RequestHandler handler) {
    this.requestHandler = Objects.requireNonNull(handler, "handler");
    return this;
  }

  @Override
  public FrameEchoServer metrics(FrameEchoMetrics metrics) {
    this.metrics = Objects.requireNonNull(metrics, "metrics");
    return this;
  }

  @Override
  public Future<FrameEchoServer> listen() {
    if (netServer != null) {
      return Future.failedFuture(new IllegalStateException("already listening"));
    }
    String notOnEventLoop = StartupChecks.notOnEventLoop(context);
    if (notOnEventLoop != null) {
      return Future.failedFuture(new IllegalStateException(notOnEventLoop));
    }
    NetServerOptions netOptions;
    try {
      netOptions = StartupChecks.netServerOptions(options);
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(e);
    }
    if (metrics == null) {
      try {
        metrics = operations.meters(options.getMetrics(), meterTag());
      } catch (IllegalArgumentException | IllegalStateException e) {
        return Future.failedFuture(e);
      }
    }
    // TLS is an upgrade at accept (see Tls): the listener itself is plain TCP.
    ServerSSLOptions tls = StartupChecks.serverSslOptions(options);
    netOptions.setSsl(false);
    SSLEngineOptions engine = netOptions.getSslEngineOptions();
    Future<ServerSSLOptions> material = tls == null ? Future.succeededFuture() : Tls.load(vertx, tls, engine)
      .recover(e -> Future.failedFuture(e instanceof IllegalArgumentException
        ? new IllegalArgumentException("invalid frame-echo configuration: " + e.getMessage(), e) : e));
    return material.compose(loaded -> listen(netOptions, tls, loaded)).map(this);
  }

  private Future<Void> listen(NetServerOptions netOptions, ServerSSLOptions configuredTls, ServerSSLOptions tls) {
    try {
      servedAddress = StartupChecks.claimAddress(vertx, context, options, this);
    } catch (IllegalStateException e) {
      return Future.failedFuture(e);
    }
    limits = ConnectionLimits.attach(vertx, options.getMaxConnections(), options.getMaxConnectionsPerIp(),
      options.effectiveMaxBufferedBytes(), options.getBudgetGraceMs());
    boolean instances = severalInstances();
    if (netOptions.getPort() == 0 && options.unixSocketAddress() == null && instances) {
      netOptions.setPort(limits.randomPort());
    }
    operations.add(metrics, limits);
    readiness = new Readiness(requestHandler, limits, order, context, () -> shutdown != null);
    if (tls != null && limits.instances() > 1) {
      detach();
      return Future.failedFuture(StartupChecks.tlsWithInstances());
    }
    if (tls != null) {
      handshakes = new Tls(vertx, context, configuredTls, tls, netOptions.getSslEngineOptions(), limits, metrics);
    }
    // Only then is ProxyProtocol loaded: it needs netty-codec-haproxy, which an embedder may leave out.
    proxyProtocol = !options.getNetServerOptions().isUseProxyProtocol() ? null : new ProxyProtocol(options, context, ticker,
      limits, metrics, Math.min(options.getLingerTimeoutMs(), Admission.REFUSAL_LINGER_MS));
    admission = new Admission(vertx, limits, metrics, order, ticker, options.getLingerTimeoutMs(), () -> shutdown != null,
      (socket, ip) -> {
        if (proxyProtocol != null) {
          proxyProtocol.begin(socket, this::serve);
        } else if (handshakes != null) {
          handshakes.begin(socket, ip, established -> serve(established, ip, null));
        } else {
          serve(socket, ip, null);
        }
      });
    netServer = vertx.createNetServer(netOptions).connectHandler(this::accept);
    SocketAddress unixSocket = options.unixSocketAddress();
    Supplier<Future<NetServer>> bind = () -> unixSocket == null ? netServer.listen()
      : UnixSocketListener.listen(vertx, context, netServer, unixSocket);
    handover = Handover.ifAskedFor(vertx, context, options, handshakes != null, proxyProtocol != null);
    Future<NetServer> bound = handover == null ? bind.get() : handover.bind(bind, netOptions, admission::accept,
      instances ? limits.entryPort() : 0);
    return bound.onFailure(e -> detach()).map(s -> {
      operations.listening();
      operations.roomCheck(readiness);
      if (handshakes != null) {
        handshakes.register();
      }
      if (requestHandler instanceof EventBusHandler eventBus) {
        eventBus.countHeldBytes(metrics, limits::heldElsewhere, limits::roomFor);
        eventBus.checkConsumer();
      }
      StartupChecks.listening(vertx, options, unixSocket != null ? "unix:" + unixSocket.path() : options.getHost() + ":"
        + s.actualPort(), handshakes != null, requestHandler, limits.budget().limit());
      return null;
    });
  }

  /**
   * Whether this server is one of several instances of its verticle's deployment, which are one server: on port 0 they
   * share one random port, and their handover entries one loopback port (Vert.x balances a shared port's connections
   * over its servers' event loops).
   */
  private boolean severalInstances() {
    DeploymentContext deployment = ((ContextInternal) context).deployment();
    return deployment != null && deployment.deployment().options().getInstances() > 1;
  }

  /** {@code netServerOptions.reusePort}: a new process may bind the same ports while this one runs (a restart). */
  private boolean reusePort() {
    return new NetServerOptions(options.getNetServerOptions()).isReusePort();
  }

  /** Leaves the deployment's shared limits and the gauges; once, when the server is done. */
  private void detach() {
    detach(null);
  }

  /**
   * As {@link #detach()}, for a server that shut down with its connections ending as {@code endings} say: the
   * deployment's totals when it was the last to go, else null.
   */
  private long[] detach(int[] endings) {
    long[] totals = null;
    if (servedAddress != null) {
      ServedAddresses.release(vertx, servedAddress);
      servedAddress = null;
    }
    if (limits != null && !detached) {
      detached = true;
      operations.noRoomCheck(readiness);
      if (requestHandler instanceof EventBusHandler eventBus) {
        eventBus.stopChecking();
      }
      operations.remove(metrics, limits);
      totals = limits.detach(vertx, endings);
      if (!options.getUnixSocket().isEmpty()) {
        SocketPaths.release(vertx, options.getUnixSocket());
      }
    }
    return totals;
  }

  /**
   * The {@code server} tag of this server's meters: {@code metrics.server}, or the frame port as configured, or the
   * unix socket's path.
   */
  private String meterTag() {
    String server = options.getMetrics().getServer();
    return !server.isEmpty() ? server : !options.getUnixSocket().isEmpty() ? options.getUnixSocket() : String.valueOf(options.getPort());
  }

  /** The book's {@code handle_accept}: the listener is learned from the first socket, then {@link Admission} decides. */
  private void accept(NetSocket socket) {
    if (listener == null) {
      listener = Listener.of(socket);
    }
    if (proxyProtocol == null) {
      admission.accept(socket);
    } else if (proxyProtocol.fromTrustedPeer(socket)) {
      admission.acceptUnaddressed(socket);
    }
  }

  /**
   * A socket with its slot taken (and its TLS handshake done, or its PROXY protocol header read) becomes a connection;
   * {@code client} is the address its header carried, or null for the socket's own.
   */
  private void serve(NetSocket socket, String ip, SocketAddress client) {
    if (shutdown != null && (handshakes != null || proxyProtocol != null)) {
      // Handshakes under way were closed when shutdown began (one that finishes anyway is closed too). A plain
      // socket accepted while stopping is served below, with the grace for its first request.
      limits.release(ip);
      socket.close();
      return;
    }
    Context loop = vertx.getOrCreateContext();
    if (onLoop == null) {
      onLoop = task -> loop.runOnContext(v -> task.run());
    }
    AcceptedSocket accepted = ChannelSocket.accepted(socket, client, loop, options.getWriteQueueMaxSize(), shutdownPacer,
      handover == null ? null : handover::successor);
    Connection connection = Connection.accept(accepted, onLoop,
      requestHandler, options, limits.budget(), metrics, limits.logSummary(), ticker, order, closed -> {
        limits.release(ip, order.gaveWay(closed));
        drain.closed(closed, closed.ending());
      });
    drain.opened(connection);
    if (shutdown != null) {
      // Accepted while stopping (the listener's last accepts reach this event loop after shutdown began): it is
      // served like the others, with the grace for its first request.
      connection.shutdownRequested();
    }
  }

  @Override
  public Future<Void> updateTls(ServerSSLOptions tls) {
    return handshakes == null ? notTls() : handshakes.update(Objects.requireNonNull(tls, "tls"));
  }

  @Override
  public Future<Void> reloadTls() {
    return handshakes == null ? notTls() : handshakes.reload();
  }

  private Future<Void> notTls() {
    return Future.failedFuture(new IllegalStateException(netServer == null ? "not listening" : "this server does not serve TLS"));
  }

  /** See {@code FrameEchoServer.reloadTls(Vertx)}. */
  public static Future<Integer> reloadAllTls(Vertx vertx) {
    return Tls.reloadAll(vertx);
  }

  @Override
  public int actualPort() {
    return netServer == null ? 0 : netServer.actualPort();
  }

  /**
   * Stops accepting, then lets Vert.x close the listener and tell every connection; completes once the port is
   * unbound and every connection has closed. In that order, a connection the kernel had queued and not handed over
   * yet stays queued until the listener closes (and moves to another listener of a reuseport group with Linux's
   * {@code tcp_migrate_req}), and one already accepted is served.
   */
  @Override
  public Future<Void> shutdown() {
    if (netServer == null) {
      return Future.succeededFuture();
    }
    if (shutdown != null) {
      return shutdown;
    }
    operations.stoppedListening();
    if (handshakes != null) {
      handshakes.closeAll();
    }
    if (proxyProtocol != null) {
      proxyProtocol.closeAll();
    }
    admission.turnAwayWaiting();
    Promise<Void> unbound = Promise.promise();
    drain.begin();
    Future<?> ended = Future.all(unbound.future(), drain.allClosed());
    shutdown = (handover == null ? ended : ended.compose(v -> handover.finished())).map(v -> {
      // One line for the deployment: its last instance to shut down says how every instance's connections ended.
      long[] endings = detach(drain.counts());
      if (endings != null) {
        log.info("frame-echo on {} shut down{}: {}{}",
          options.getUnixSocket().isEmpty() ? "port " + netServer.actualPort() : "unix:" + options.getUnixSocket(),
          StopSignal.cause(), handover == null ? "" : handover.summary(endings[4]), Drain.summary(endings));
      }
      return null;
    });
    long timeout = options.getShutdownTimeoutMs();
    // Vert.x's own forced close still flushes first, which a client that does not read can block: at the
    // deadline, cut what is left. Connections still closing when Vert.x reports its part done are not cut.
    long deadline = vertx.setTimer(Math.max(1, timeout), id -> drain.cutAll());
    drain.allClosed().onComplete(ar -> vertx.cancelTimer(deadline));
    Future<Void> stopped = listener == null ? Future.succeededFuture() : listener.stopAccepting(context);
    (handover == null ? stopped : Future.all(stopped, handover.findSuccessor())).onComplete(ar -> {
      Future<Void> closing = netServer.shutdown(timeout, TimeUnit.MILLISECONDS);
      if (handover != null) {
        closing = Future.all(closing, handover.shutdownAdopted(timeout)).mapEmpty();
      }
      if (listener != null) {
        listener.resumeIfOpen();
      }
      closing.transform(done -> Listener.allUnbound(vertx, context)).onComplete(unbound);
      drain.completeIfEmpty();
    });
    return shutdown;
  }

  @Override
  public Future<Void> close() {
    if (netServer == null) {
      return Future.succeededFuture();
    }
    if (shutdown == null) {
      operations.stoppedListening();
    }
    if (proxyProtocol != null) {
      proxyProtocol.closeAll();
    }
    if (handshakes != null) {
      handshakes.closeAll();
    }
    // Vert.x closes their sockets with the others; none is decided for afterwards.
    context.runOnContext(v -> admission.forgetWaiting());
    // The adopted connections (the handover's entry) close with the others, before the limits are left.
    Future<Void> adoptedClosed = handover == null ? Future.succeededFuture() : handover.finished();
    return Future.all(netServer.close(), adoptedClosed).<Void>mapEmpty()
      .transform(closed -> Listener.allUnbound(vertx, context)
        .transform(unbound -> closed.succeeded() ? Future.<Void>succeededFuture() : Future.<Void>failedFuture(closed.cause())))
      .onComplete(ar -> detach());
  }

  @Override
  public Future<Void> drainAndShutdown() {
    operations.draining();
    long delay = options.getDrainDelayMs();
    // Through compose, so that a shutdown that throws fails the future and is still counted off.
    return (delay == 0 ? Future.succeededFuture() : vertx.timer(delay, TimeUnit.MILLISECONDS)).compose(t -> shutdown())
      .onComplete(ar -> operations.drained());
  }

  /** See {@code FrameEchoServer.checkTls}. */
  public static Future<Void> checkTls(Vertx vertx, FrameEchoOptions options) {
    return Tls.check(vertx, options);
  }

  /**
   * Why the metrics endpoint's {@code /metrics} cannot show this listening server's meters, or null when it can
   * (see {@link Operations#whyNotScraped}).
   */
  public String whyMetersNotScraped() {
    return operations.whyNotScraped(metrics, options.getMetrics());
  }

  /**
   * Opens the HTTP endpoint for {@code /metrics} and {@code /health} over this server's Vert.x instance: on the
   * event loop the application set aside for it ({@link Operations#openEndpointOn}), or else on this server's.
   */
  public Future<Integer> openOperationsEndpoint(MetricsOptions metricsOptions) {
    return OperationsEndpoint.open(vertx, context, metricsOptions, reusePort(), operations);
  }
}
