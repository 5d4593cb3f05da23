package io.frameecho.server.impl;

import io.frameecho.protocol.Frames;
import io.frameecho.server.EchoHandler;
import io.frameecho.server.EventBusHandler;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.FrameEchoServer;
import io.frameecho.server.HandlerOptions;
import io.frameecho.server.MetricsOptions;
import io.frameecho.server.Rejection;
import io.frameecho.server.RequestHandler;
import io.frameecho.server.TlsOptions;
import io.frameecho.server.impl.connection.ActivityOrder;
import io.frameecho.server.impl.connection.Connection;
import io.frameecho.server.impl.netty.ChannelSocket;
import io.frameecho.server.impl.netty.HeldNewcomers;
import io.frameecho.server.impl.netty.Internals;
import io.frameecho.server.impl.netty.Listener;
import io.frameecho.server.impl.ops.Operations;
import io.frameecho.server.impl.ops.OperationsEndpoint;
import io.frameecho.server.impl.shared.ConnectionLimits;
import io.frameecho.server.impl.shared.SocketPaths;
import io.frameecho.server.impl.shared.Ticker;
import io.vertx.core.Context;
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

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The server behind {@link FrameEchoServer}: the book's {@code handle_accept} and the drain on shutdown, on the
 * event loop it was created on. Its connections' limits and budget are the deployment's ({@link ConnectionLimits}).
 */
public final class FrameEchoServerImpl implements FrameEchoServer {

  /** The facade's logger name: the one operators configure and see on the listening and shutdown lines. */
  private static final Logger log = LoggerFactory.getLogger(FrameEchoServer.class);
  /** The Vert.x hooks line is logged by the first server of the process only. */
  private static final AtomicBoolean HOOKS_LOGGED = new AtomicBoolean();
  /** At most how long a refused client's input is read and discarded before its socket closes. */
  private static final long REFUSAL_LINGER_MS = 1000;
  /** How many newcomers may wait for a slot however few connections this loop has. */
  private static final int FEWEST_WAITING = 16;
  /** Linux's switch that moves a closing listener's queued connections to another listener of its reuseport group. */
  private static final String TCP_MIGRATE_REQ = "/proc/sys/net/ipv4/tcp_migrate_req";
  private static final AtomicBoolean MIGRATE_REQ_CHECKED = new AtomicBoolean();

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
  private TlsHandshakes handshakes;
  /** The clock and timers of this server's connections and of its activity order. */
  private final Ticker ticker;
  /** This instance's connections from the least to the most recently active; on its event loop only. */
  private final ActivityOrder order;
  /** Newcomers waiting for a connection to give way to them; on its event loop only. */
  private final WaitingNewcomers<Newcomer> newcomers;
  /** Open connections of this server instance; touched on its event loop only. */
  private final Set<Connection> connections = new HashSet<>();
  private Future<Void> shutdown;
  /** This server's answer to readiness, registered while it listens. */
  private final java.util.function.Supplier<Future<Boolean>> room = this::roomForNewcomer;
  private final Promise<Void> allClosed = Promise.promise();
  private int drained;
  private int closedIdle;
  private int cut;
  /** The listening channel, learned from the first connection it accepted; null before. */
  private Listener listener;

  public FrameEchoServerImpl(Vertx vertx, FrameEchoOptions options) {
    this.vertx = Objects.requireNonNull(vertx, "vertx");
    this.context = vertx.getOrCreateContext();
    this.options = new FrameEchoOptions(Objects.requireNonNull(options, "options"));
    this.operations = Operations.shared(vertx, Internals.transportName(vertx));
    this.ticker = Ticker.of(vertx);
    this.order = new ActivityOrder(ticker, this.options.getIdleGiveWayMs());
    this.newcomers = new WaitingNewcomers<>(ticker, this::decide);
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
    NetServerOptions netOptions;
    try {
      netOptions = netServerOptions();
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
    // TLS is an upgrade at accept (see TlsHandshakes): the listener itself is plain TCP.
    ServerSSLOptions tls = options.serverSslOptions();
    netOptions.setSsl(false);
    SSLEngineOptions engine = netOptions.getSslEngineOptions();
    Future<ServerSSLOptions> material = tls == null ? Future.succeededFuture() : TlsMaterial.load(vertx, tls, engine)
      .recover(e -> Future.failedFuture(e instanceof IllegalArgumentException
        ? new IllegalArgumentException("invalid frame-echo configuration: " + e.getMessage(), e) : e));
    return material.compose(loaded -> listen(netOptions, tls, loaded));
  }

  private Future<FrameEchoServer> listen(NetServerOptions netOptions, ServerSSLOptions configuredTls, ServerSSLOptions tls) {
    limits = ConnectionLimits.attach(vertx, options.getMaxConnections(), options.getMaxConnectionsPerIp(),
      options.effectiveMaxBufferedBytes(), options.getMaxFrameSize(), options.getBudgetGraceMs());
    operations.add(metrics, limits);
    if (tls != null && limits.instances() > 1) {
      // Found by the operator's trial: every other TLS connection hung, with a NullPointerException each. Vert.x's
      // shared listener hands the sockets of instances after the first no TLS context (5.1.6's NetServerImpl passes
      // the sharing server's own, unset), and a handshake that TLS upgrades at accept then fails.
      detach();
      return Future.failedFuture(new IllegalArgumentException("invalid frame-echo configuration: TLS with more than one "
        + "instance (-instances, DeploymentOptions.setInstances): Vert.x gives the sockets of a shared listener's other "
        + "instances no TLS context; deploy one instance"));
    }
    if (tls != null) {
      handshakes = new TlsHandshakes(vertx, context, configuredTls, tls, netOptions.getSslEngineOptions(), limits, metrics);
    }
    netServer = vertx.createNetServer(netOptions).connectHandler(this::accept);
    SocketAddress unixSocket = options.unixSocketAddress();
    Future<NetServer> bound = unixSocket == null ? netServer.listen() : UnixSocketListener.listen(vertx, context, netServer, unixSocket);
    return bound.onFailure(e -> detach()).map(s -> {
      operations.listening();
      operations.roomCheck(room);
      if (handshakes != null) {
        handshakes.register();
      }
      if (requestHandler instanceof EventBusHandler eventBus) {
        eventBus.checkConsumer();
      }
      if (HOOKS_LOGGED.compareAndSet(false, true)) {
        log.info("{}", Internals.description());
        String off = Internals.whatIsOff();
        if (off != null) {
          log.warn("{}", off);
        }
      }
      warnIfQueuedConnectionsDoNotMigrate();
      log.info("frame-echo listening on {}{} (transport={}, maxFrameSize={}, writeQueueMaxSize={}, handler={}, maxConnections={}, "
          + "maxConnectionsPerIp={}, idleGiveWayMs={}, maxBufferedBytes={}, budgetGraceMs={}, idleTimeoutMs={}, frameTimeoutMs={}, "
          + "writeStallTimeoutMs={}, lingerTimeoutMs={}, shutdownTimeoutMs={})",
        unixSocket != null ? "unix:" + unixSocket.path() : options.getHost() + ":" + s.actualPort()
          + ("0.0.0.0".equals(options.getHost()) || "::".equals(options.getHost()) ? " (all interfaces)" : ""),
        handshakes != null ? " with TLS" : "", Internals.transportName(vertx),
        Math.min(options.getMaxFrameSize(), Frames.LARGEST_PAYLOAD),
        options.getWriteQueueMaxSize(), describeHandler(), options.getMaxConnections(), options.getMaxConnectionsPerIp(),
        options.getIdleGiveWayMs(), limits.budget().limit(), options.getBudgetGraceMs(), options.getIdleTimeoutMs(), options.getFrameTimeoutMs(), options.getWriteStallTimeoutMs(),
        options.getLingerTimeoutMs(), options.getShutdownTimeoutMs());
      String descriptors = DescriptorLimit.shortfall(options.getMaxConnections(), DescriptorLimit.processLimit());
      if (descriptors != null) {
        log.warn("{}", descriptors);
      }
      return this;
    });
  }

  /** {@code netServerOptions.reusePort}: a new process may bind the same ports while this one runs (a restart). */
  private boolean reusePort() {
    return new NetServerOptions(options.getNetServerOptions()).isReusePort();
  }

  /**
   * With {@code reusePort} on Linux, one WARN per process when {@code net.ipv4.tcp_migrate_req} is 0: a restart then
   * resets the connections queued on this process's listener when it closes. Read off the event loop.
   */
  private void warnIfQueuedConnectionsDoNotMigrate() {
    if (!reusePort() || !System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")
        || !MIGRATE_REQ_CHECKED.compareAndSet(false, true)) {
      return;
    }
    // Not Vert.x's readFile: a /proc file reports a size of 0, and it read nothing (the operator's trial saw no WARN).
    vertx.executeBlocking(() -> java.nio.file.Files.readString(java.nio.file.Path.of(TCP_MIGRATE_REQ)), false).onSuccess(value -> {
      if ("0".equals(value.trim())) {
        log.warn("reusePort is on and net.ipv4.tcp_migrate_req is 0: when this process stops, connections its listener has "
          + "queued and not accepted yet are reset instead of moving to the process that replaces it; "
          + "set sysctl net.ipv4.tcp_migrate_req=1 (Linux 5.14+) for restarts without a lost connection");
      }
    }).onFailure(e -> log.warn("reusePort is on and this kernel has no net.ipv4.tcp_migrate_req (Linux before 5.14): when this "
      + "process stops, connections its listener has queued and not accepted yet are reset instead of moving to the new process"));
  }

  /** Leaves the deployment's shared limits and the gauges; once, when the server is done. */
  private void detach() {
    if (limits != null && !detached) {
      detached = true;
      operations.noRoomCheck(room);
      if (requestHandler instanceof EventBusHandler eventBus) {
        eventBus.stopChecking();
      }
      operations.remove(metrics, limits);
      limits.detach(vertx);
      if (!options.getUnixSocket().isEmpty()) {
        SocketPaths.release(vertx, options.getUnixSocket());
      }
    }
  }

  /**
   * Whether a newcomer would be served now, for readiness (asked from any thread): its event-bus address, if it
   * answers through one, has a consumer; and a slot is free, or (asked on this server's event loop, only when every
   * slot is taken) an idle connection could give way.
   */
  private Future<Boolean> roomForNewcomer() {
    if (requestHandler instanceof EventBusHandler eventBus && !eventBus.hasConsumer()) {
      return Future.succeededFuture(false);
    }
    int max = limits.maxConnections();
    if (max == 0 || limits.openConnections() < max) {
      return Future.succeededFuture(true);
    }
    Promise<Boolean> answer = Promise.promise();
    context.runOnContext(v -> answer.complete(shutdown == null && order.idlest() != null));
    return answer.future();
  }

  /**
   * The {@code server} tag of this server's meters: {@code metrics.server}, or the frame port as configured, or the
   * unix socket's path.
   */
  private String meterTag() {
    String server = options.getMetrics().getServer();
    return !server.isEmpty() ? server : !options.getUnixSocket().isEmpty() ? options.getUnixSocket() : String.valueOf(options.getPort());
  }

  /** Vert.x's options from {@code netServerOptions}, then ours on top. */
  private NetServerOptions netServerOptions() {
    try {
      options.checkTls();
      options.checkListenAddress();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("invalid frame-echo configuration: " + e.getMessage(), e);
    }
    NetServerOptions netOptions = new NetServerOptions(options.getNetServerOptions())
      .setHost(options.getHost())
      .setPort(options.getPort());
    TlsOptions tls = options.getTls();
    if (tls != null) {
      requireReadable("tls.certPath", tls.getCertPath());
      requireReadable("tls.keyPath", tls.getKeyPath());
    }
    return netOptions;
  }

  private static void requireReadable(String key, String path) {
    if (!Files.isReadable(Path.of(path))) {
      throw new IllegalArgumentException("invalid frame-echo configuration: " + key + ": cannot read the file " + path);
    }
  }

  private String describeHandler() {
    HandlerOptions h = options.getHandler();
    if (requestHandler instanceof EventBusHandler) {
      return "eventbus:" + h.getAddress() + " timeoutMs=" + h.getTimeoutMs() + " maxInFlight=" + h.getMaxInFlight();
    }
    if (requestHandler instanceof EchoHandler) {
      return "echo";
    }
    // A lambda's class name is noise (demo.App$$Lambda$162/0x...): say what it is instead.
    return requestHandler.getClass().isSynthetic() ? "application (lambda)" : requestHandler.getClass().getName();
  }

  /**
   * The book's {@code handle_accept}: every accepted socket becomes a {@link Connection}, unless over a limit.
   * With every slot of {@code maxConnections} taken, the newcomer waits for the loop's next poll of its sockets
   * ({@link WaitingNewcomers}), then the connection idle longest on this event loop gives its slot to it; only when
   * none can is the newcomer turned away.
   */
  private void accept(NetSocket socket) {
    if (listener == null) {
      listener = Listener.of(socket);
    }
    // Before its first read (a TLS handshake's, a held newcomer's): small reads while the budget is over its limit.
    ChannelSocket.capReads(socket, limits.budget()::over);
    String ip = clientAddress(socket);
    Rejection rejection = limits.tryAcquire(ip);
    if (rejection == Rejection.MAX_CONNECTIONS) {
      // No more wait than there are connections that could give way (or a few, in a small house): the rest are turned
      // away at once.
      if (order.givesWay() && shutdown == null && newcomers.size() < Math.max(order.size(), FEWEST_WAITING)) {
        HeldNewcomers.hold(socket);
        newcomers.add(new Newcomer(socket, ip));
        return;
      }
      rejection = limits.reject(Rejection.MAX_CONNECTIONS, ip);
    }
    admit(socket, ip, rejection, null);
  }

  /** A socket that waits for a slot, from {@code ip}. */
  private record Newcomer(NetSocket socket, String ip) {
  }

  /**
   * After the loop has read what its connections' clients sent: the newcomer takes a free slot, or the slot of the
   * connection quiet longest since before it arrived, or is turned away.
   */
  private void decide(Newcomer newcomer, long arrivedNanos) {
    NetSocket socket = newcomer.socket();
    if (!HeldNewcomers.isOpen(socket)) {
      // Its client left while it waited; it held no slot.
      return;
    }
    HeldNewcomers.readAgain(socket);
    String ip = newcomer.ip();
    Rejection rejection = limits.tryAcquire(ip);
    Connection idle = null;
    if (rejection == Rejection.MAX_CONNECTIONS) {
      idle = order.idlest(arrivedNanos);
      rejection = idle == null ? limits.reject(Rejection.MAX_CONNECTIONS, ip) : limits.takeOver(ip);
    }
    admit(socket, ip, rejection, idle);
  }

  /** Serves the socket with its slot ({@code idle}, if not null, gives its own), or turns it away for {@code rejection}. */
  private void admit(NetSocket socket, String ip, Rejection rejection, Connection idle) {
    if (rejection != null) {
      metrics.connectionRejected(rejection);
      ChannelSocket.refuse(socket, vertx.getOrCreateContext(), Math.min(options.getLingerTimeoutMs(), REFUSAL_LINGER_MS));
      return;
    }
    if (idle != null) {
      idle.giveWay();
      limits.gaveWay(ip);
    }
    if (handshakes != null) {
      handshakes.begin(socket, ip, established -> serve(established, ip));
    } else {
      serve(socket, ip);
    }
  }

  /** The server is stopping: newcomers still waiting for a slot are turned away, as over {@code maxConnections}. */
  private void turnAwayWaiting() {
    for (Newcomer newcomer : newcomers.removeAll()) {
      if (HeldNewcomers.isOpen(newcomer.socket())) {
        HeldNewcomers.readAgain(newcomer.socket());
        admit(newcomer.socket(), newcomer.ip(), limits.reject(Rejection.MAX_CONNECTIONS, newcomer.ip()), null);
      }
    }
  }

  /** A socket with its slot taken (and its TLS handshake done) becomes a connection. */
  private void serve(NetSocket socket, String ip) {
    if (shutdown != null && handshakes != null) {
      // Handshakes under way were closed when shutdown began (one that finishes anyway is closed too). A plain
      // socket accepted while stopping is served below, with the grace for its first request.
      limits.release(ip);
      socket.close();
      return;
    }
    Context loop = vertx.getOrCreateContext();
    Connection connection = Connection.accept(ChannelSocket.accepted(socket, loop, options.getWriteQueueMaxSize()), loop,
      requestHandler, options, limits.budget(), metrics, limits.connectionLogs(), ticker, order, closed -> {
        if (closed.gaveWay()) {
          limits.releaseAddress(ip);
        } else {
          limits.release(ip);
        }
        connections.remove(closed);
        if (shutdown != null) {
          if (closed.wasCut()) {
            cut++;
          } else if (closed.closedIdle()) {
            closedIdle++;
          } else {
            drained++;
          }
          if (connections.isEmpty()) {
            allClosed.tryComplete();
          }
        }
      });
    connections.add(connection);
    if (shutdown != null) {
      // Accepted while stopping (the listener's last accepts reach this event loop after shutdown began): it is
      // served like the others, with the grace for its first request.
      connection.shutdownRequested();
    }
  }

  /** The key of a client's per-address limit: its IP address; every unix-socket peer shares {@code "unix"}. */
  private static String clientAddress(NetSocket socket) {
    SocketAddress remote = socket.remoteAddress();
    return remote == null ? "unknown" : remote.isDomainSocket() ? "unix"
      : remote.hostAddress() != null ? remote.hostAddress() : remote.toString();
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

  /** See {@link FrameEchoServer#reloadTls(Vertx)}. */
  public static Future<Integer> reloadAllTls(Vertx vertx) {
    return TlsHandshakes.reloadAll(vertx);
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
    turnAwayWaiting();
    Promise<Void> unbound = Promise.promise();
    shutdown = Future.all(unbound.future(), allClosed.future()).map(v -> {
      detach();
      log.info("frame-echo on {} shut down{}: {} connection(s) drained, {} closed idle, {} cut",
        options.getUnixSocket().isEmpty() ? "port " + netServer.actualPort() : "unix:" + options.getUnixSocket(),
        stopCause(), drained, closedIdle, cut);
      return null;
    });
    long timeout = options.getShutdownTimeoutMs();
    // Vert.x's own forced close still flushes first, which a client that does not read can block: at the
    // deadline, cut what is left. Connections still closing when Vert.x reports its part done are not cut.
    long deadline = vertx.setTimer(Math.max(1, timeout), id -> List.copyOf(connections).forEach(Connection::cut));
    allClosed.future().onComplete(ar -> vertx.cancelTimer(deadline));
    Future<Void> stopped = listener == null ? Future.succeededFuture() : listener.stopAccepting(context);
    stopped.onComplete(ar -> {
      Future<Void> closing = netServer.shutdown(timeout, TimeUnit.MILLISECONDS);
      if (listener != null) {
        listener.resumeIfOpen();
      }
      closing.transform(done -> Listener.allUnbound(vertx, context)).onComplete(unbound);
      if (connections.isEmpty()) {
        allClosed.tryComplete();
      }
    });
    return shutdown;
  }

  /** What stopped the process, for the shutdown line: " on SIGTERM", or nothing when the application stopped it. */
  private static String stopCause() {
    String signal = StopSignal.received();
    return signal == null ? "" : " on " + signal;
  }

  @Override
  public Future<Void> close() {
    if (netServer == null) {
      return Future.succeededFuture();
    }
    if (shutdown == null) {
      operations.stoppedListening();
    }
    if (handshakes != null) {
      handshakes.closeAll();
    }
    // Vert.x closes their sockets with the others; none is decided for afterwards.
    context.runOnContext(v -> newcomers.removeAll());
    return netServer.close()
      .transform(closed -> Listener.allUnbound(vertx, context)
        .transform(unbound -> closed.succeeded() ? Future.<Void>succeededFuture() : Future.<Void>failedFuture(closed.cause())))
      .onComplete(ar -> detach());
  }

  @Override
  public Future<Void> drainAndShutdown() {
    operations.draining();
    long delay = options.getDrainDelayMs();
    return delay == 0 ? shutdown() : vertx.timer(delay, TimeUnit.MILLISECONDS).compose(t -> shutdown());
  }

  /** See {@link FrameEchoServer#checkTls}. */
  public static Future<Void> checkTls(Vertx vertx, FrameEchoOptions options) {
    ServerSSLOptions tls;
    try {
      options.checkTls();
      tls = options.serverSslOptions();
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(e);
    }
    return tls == null ? Future.succeededFuture()
      : TlsMaterial.load(vertx, tls, options.getNetServerOptions().getSslEngineOptions()).mapEmpty();
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
    Context endpoint = Operations.endpointContext(vertx);
    if (endpoint == null) {
      return OperationsEndpoint.start(vertx, metricsOptions, reusePort(), operations).map(http -> http.actualPort());
    }
    Promise<Integer> opened = Promise.promise();
    // The outcome comes back on this server's context: what the caller does next (listening, above all) must run
    // there, or its NetServer belongs to no deployment and Vert.x closes it at once on SIGTERM, drain or not.
    endpoint.runOnContext(v -> OperationsEndpoint.start(endpoint.owner(), metricsOptions, reusePort(), operations)
      .map(http -> http.actualPort()).onComplete(ar -> context.runOnContext(back -> opened.handle(ar))));
    return opened.future();
  }
}
