package io.frameecho.server.impl;

import io.frameecho.server.impl.shared.ServedAddresses;
import io.frameecho.server.impl.connection.EchoHandler;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.HandlerOptions;
import io.frameecho.server.RequestHandler;
import io.frameecho.server.TlsOptions;
import io.frameecho.server.impl.netty.Internals;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.ServerSSLOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What a server checks and says at start-up: its options checked before it binds (TLS files readable, a listen
 * address), its listening line, and once per process where the process is what it is about: the Vert.x and Java
 * versions, a reuseport restart that would reset queued connections, too few file
 * descriptors for {@code maxConnections}. Any thread: its flags are process-wide.
 */
public final class StartupChecks {

  private static final Logger log = LoggerFactory.getLogger(FrameEchoServerImpl.LOGGER);
  /** Linux's switch that moves a closing listener's queued connections to another listener of its reuseport group. */
  private static final String TCP_MIGRATE_REQ = "/proc/sys/net/ipv4/tcp_migrate_req";
  /** The versions line is logged by the first server of the process only. */
  private static final AtomicBoolean VERSIONS_LOGGED = new AtomicBoolean();
  private static final AtomicBoolean MIGRATE_REQ_CHECKED = new AtomicBoolean();

  private StartupChecks() {
  }

  /**
   * Once per process: which Vert.x and Java run (INFO: what an operator names in a report), and, if the epoll
   * workaround is off on this Netty, one WARN saying what that costs.
   */
  static void logVersionsOnce() {
    if (VERSIONS_LOGGED.compareAndSet(false, true)) {
      log.info("running on Vert.x {}, Java {}", Internals.vertxVersion(), Runtime.version());
      String off = Internals.whatIsOff();
      if (off != null) {
        log.warn("{}", off);
      }
    }
  }

  /**
   * With {@code reusePort} on Linux, one WARN per process when {@code net.ipv4.tcp_migrate_req} is 0: a restart then
   * resets the connections queued on this process's listener when it closes. Read off the event loop.
   */
  static void warnIfQueuedConnectionsDoNotMigrate(Vertx vertx, boolean reusePort) {
    if (!reusePort || !System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")
        || !MIGRATE_REQ_CHECKED.compareAndSet(false, true)) {
      return;
    }
    // Not Vert.x's readFile: a /proc file reports a size of 0, and it reads nothing.
    vertx.executeBlocking(() -> Files.readString(Path.of(TCP_MIGRATE_REQ)), false).onSuccess(value -> {
      String warning = migrateReqWarning(value);
      if (warning != null) {
        log.warn("{}", warning);
      }
    }).onFailure(e -> log.warn("reusePort is on and this kernel has no net.ipv4.tcp_migrate_req (Linux before 5.14): when this "
      + "process stops, connections its listener has queued and not accepted yet are reset instead of moving to the new process"));
  }

  /** The warning for {@code tcp_migrate_req}'s {@code value}, or null when queued connections move on a restart. */
  static String migrateReqWarning(String value) {
    return "0".equals(value.trim()) ? "reusePort is on and net.ipv4.tcp_migrate_req is 0: when this process stops, connections "
      + "its listener has queued and not accepted yet are reset instead of moving to the process that replaces it; "
      + "set sysctl net.ipv4.tcp_migrate_req=1 (Linux 5.14+) for restarts without a lost connection" : null;
  }

  /** One WARN when the process may open too few descriptors for {@code maxConnections} (once per larger need). */
  static void warnIfTooFewDescriptors(int maxConnections) {
    String descriptors = DescriptorLimit.shortfall(maxConnections, DescriptorLimit.processLimit());
    if (descriptors != null) {
      log.warn("{}", descriptors);
    }
  }

  /** The listening line, one per instance, with the settings that shape its connections. */
  static void logListening(FrameEchoOptions options, String address, boolean tls, String transport, String handler, long budgetLimit) {
    // frame-echo's own framing goes unsaid, as before there was another; any other is named after maxFrameSize.
    String maxFrameSize = Math.min(options.getMaxFrameSize(), options.getFraming().largestBody())
      + (options.getFraming().isDefault() ? "" : ", framing=" + options.getFraming());
    log.info("frame-echo listening on {}{} (transport={}, maxFrameSize={}, writeQueueMaxSize={}, handler={}, maxConnections={}, "
        + "maxConnectionsPerIp={}, idleGiveWayMs={}, maxBufferedBytes={}, budgetGraceMs={}, idleTimeoutMs={}, keepAlive={}, "
        + "proxyProtocol={}, frameTimeoutMs={}, writeStallTimeoutMs={}, lingerTimeoutMs={}, shutdownTimeoutMs={})",
      address + (address.startsWith("unix:") || !("0.0.0.0".equals(options.getHost()) || "::".equals(options.getHost()))
        ? "" : " (all interfaces)"),
      tls ? " with TLS" : "", transport, maxFrameSize,
      options.getWriteQueueMaxSize(), handler, options.getMaxConnections(), options.getMaxConnectionsPerIp(),
      options.getIdleGiveWayMs(), budgetLimit, options.getBudgetGraceMs(), options.getIdleTimeoutMs(), describeKeepAlive(options), describeProxyProtocol(options), options.getFrameTimeoutMs(),
      options.getWriteStallTimeoutMs(), options.getLingerTimeoutMs(), options.getShutdownTimeoutMs());
  }

  /** Vert.x's options from {@code netServerOptions}, then ours on top. */
  static NetServerOptions netServerOptions(FrameEchoOptions options) {
    try {
      checkOptions(options);
      if (options.getNetServerOptions().isUseProxyProtocol() && !Internals.proxyCodecPresent()) {
        throw new IllegalArgumentException("netServerOptions.useProxyProtocol: needs io.netty:netty-codec-haproxy on the class "
          + "path (the runnable jar has it): add it to the application, at its Netty's version");
      }
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("invalid frame-echo configuration: " + e.getMessage(), e);
    }
    // The PROXY protocol's header is read by frame-echo once a socket has its slot (ProxyProtocol); Vert.x's own reader
    // would run before the socket is counted anywhere.
    NetServerOptions netOptions = keepAlive(options, new NetServerOptions(options.getNetServerOptions()))
      .setUseProxyProtocol(false)
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

  /** How the listening line names {@code requestHandler}. */
  static String describeHandler(RequestHandler requestHandler, HandlerOptions h) {
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
   * Why a server cannot run on {@code context}, or null: each connection lives on one event loop, its reads, writes and
   * timers in one thread (a worker or virtual-thread context would run them on a pool of threads).
   */
  public static String notOnEventLoop(Context context) {
    return context.isEventLoopContext() ? null : "invalid frame-echo deployment: a frame-echo server runs its connections on "
      + "an event loop, and this one would be created on a " + context.threadingModel() + " context; deploy it with "
      + "ThreadingModel.EVENT_LOOP (DeploymentOptions' default), or create it from an event loop";
  }

  /**
   * Claims the address {@code options} name for {@code server}'s deployment in this Vert.x (port 0 claims nothing:
   * null); throws if another deployment, or a server outside any, serves it already.
   */
  static String claimAddress(Vertx vertx, Context context, FrameEchoOptions options, Object server) {
    if (options.getPort() == 0 && options.getUnixSocket().isEmpty()) {
      return null;
    }
    String address = options.getUnixSocket().isEmpty() ? options.getHost() + ":" + options.getPort() : "unix:" + options.getUnixSocket();
    String deployment = context.deploymentID();
    Object other = ServedAddresses.claim(vertx, address, deployment != null ? deployment : server);
    if (other != null) {
      throw new IllegalStateException("frame-echo already serves " + address + " in this Vert.x ("
        + (other instanceof String id ? "deployment " + id : "a server outside any deployment") + "): Vert.x would hand the "
        + "port's connections to both in turn, each with its own handler and limits; deploy more instances of that "
        + "deployment (DeploymentOptions.setInstances) or listen on another port");
    }
    return address;
  }

  /**
   * TLS with more than one instance: Vert.x's shared listener hands the sockets of instances after the first no TLS
   * context (5.1.6's NetServerImpl passes the sharing server's own, unset), and a handshake that TLS upgrades at accept
   * then fails.
   */
  static IllegalArgumentException tlsWithInstances() {
    return new IllegalArgumentException("invalid frame-echo configuration: TLS with more than one instance (-instances, "
      + "DeploymentOptions.setInstances): Vert.x gives the sockets of a shared listener's other instances no TLS context; "
      + "deploy one instance");
  }

  /** What a server says once it listens on {@code address}: the internals once, the listening line, the warnings. */
  static void listening(Vertx vertx, FrameEchoOptions options, String address, boolean tls, RequestHandler handler,
                        long budgetLimit) {
    logVersionsOnce();
    warnIfQueuedConnectionsDoNotMigrate(vertx, new NetServerOptions(options.getNetServerOptions()).isReusePort());
    logListening(options, address, tls, Internals.transportName(vertx), describeHandler(handler, options.getHandler()),
      budgetLimit);
    warnIfTooFewDescriptors(options.getMaxConnections());
  }

  /**
   * Checks the settings that are wrong together (each setter checks its own value): a bad combination throws
   * {@link IllegalArgumentException} naming the key and the reason.
   */
  public static void checkOptions(FrameEchoOptions o) {
    checkTls(o);
    checkListenAddress(o);
    checkKeepAlive(o);
    checkPromises(o);
    checkProxyProtocol(o);
  }

  /**
   * A server listens on a unix socket or on a host and port, not both: {@code unixSocket} with a host or port other
   * than the defaults is refused rather than one of them being ignored; and on frame-echo's host and port, not on
   * a host or port set in Vert.x's options, which are refused too.
   *
   * @throws IllegalArgumentException naming the key
   */
  private static void checkListenAddress(FrameEchoOptions o) {
    // From Java, Vert.x's options may carry a host or port of their own: the server listens on frame-echo's, so a
    // different one is refused rather than silently replaced (a host of 127.0.0.1 would have become 0.0.0.0).
    NetServerOptions vertxDefaults = new NetServerOptions();
    if (!java.util.Objects.equals(o.getNetServerOptions().getHost(), vertxDefaults.getHost())) {
      throw new IllegalArgumentException("netServerOptions.host: set it with FrameEchoOptions.setHost (the top-level key "
        + "'host'), not in Vert.x's options: " + o.getNetServerOptions().getHost());
    }
    if (o.getNetServerOptions().getPort() != vertxDefaults.getPort()) {
      throw new IllegalArgumentException("netServerOptions.port: set it with FrameEchoOptions.setPort (the top-level key "
        + "'port'), not in Vert.x's options: " + o.getNetServerOptions().getPort());
    }
    if (!o.getUnixSocket().isEmpty() && (!FrameEchoOptions.DEFAULT_HOST.equals(o.getHost()) || o.getPort() != FrameEchoOptions.DEFAULT_PORT)) {
      throw new IllegalArgumentException("unixSocket: a server listens on a unix socket or on host and port, not both; "
        + "leave host and port at their defaults (" + FrameEchoOptions.DEFAULT_HOST + ", " + FrameEchoOptions.DEFAULT_PORT + ") or unixSocket empty");
    }
  }

  /**
   * TLS settings that would be ignored, or fail at start, are refused: a {@code tls} section without both paths,
   * {@code ssl} without key material, and key material, trust or {@code clientAuth} without TLS (the server would
   * serve plain TCP).
   *
   * @throws IllegalArgumentException naming the key
   */
  static void checkTls(FrameEchoOptions o) {
    if (o.getTls() != null && (o.getTls().getCertPath() == null || o.getTls().getKeyPath() == null)) {
      throw new IllegalArgumentException("tls: both tls.certPath and tls.keyPath are required");
    }
    NetServerOptions net = o.getNetServerOptions();
    boolean keyMaterial = o.getTls() != null || net.getKeyCertOptions() != null;
    if (net.isSsl() && !keyMaterial) {
      throw new IllegalArgumentException("netServerOptions.ssl: TLS needs a key and certificate: the tls section, or "
        + "pemKeyCertOptions, pfxKeyCertOptions or keyStoreOptions in netServerOptions");
    }
    if (o.getTls() == null && !net.isSsl()) {
      if (net.getKeyCertOptions() != null) {
        throw new IllegalArgumentException("netServerOptions: key and certificate given without \"ssl\": true; the server "
          + "would serve plain TCP");
      }
      if (net.getTrustOptions() != null || net.getClientAuth() != io.vertx.core.http.ClientAuth.NONE) {
        throw new IllegalArgumentException("netServerOptions: trust or clientAuth given without TLS; the server would serve "
          + "plain TCP and authenticate no client");
      }
    }
  }

  /**
   * The TLS the server serves, as Vert.x's options: {@code netServerOptions}' with the {@code tls} section's PEM files
   * as key and certificate; null for plain TCP.
   */
  public static ServerSSLOptions serverSslOptions(FrameEchoOptions o) {
    if (!o.isTls()) {
      return null;
    }
    NetServerOptions net = new NetServerOptions(o.getNetServerOptions()).setSsl(true);
    if (o.getTls() != null) {
      net.setKeyCertOptions(new io.vertx.core.net.PemKeyCertOptions().setCertPath(o.getTls().getCertPath()).setKeyPath(o.getTls().getKeyPath()));
    }
    return net.getSslOptions().copy();
  }

  /**
   * Vert.x's options with frame-echo's keep-alive applied: as given when {@code netServerOptions} turns
   * {@code tcpKeepAlive} on itself, else {@code keepAliveSeconds}' (idle, a third of it between probes, three probes).
   * Vert.x sets idle, interval and count on epoll and io_uring; on NIO the kernel's
   * {@code net.ipv4.tcp_keepalive_*} apply.
   */
  static NetServerOptions keepAlive(FrameEchoOptions o, NetServerOptions net) {
    if (net.isTcpKeepAlive() || o.getKeepAliveSeconds() == 0 || !o.getUnixSocket().isEmpty()) {
      return net;
    }
    // Through TCPSSLOptions, whose setters have one signature on every Vert.x 5 line (NetServerOptions overrides
    // some with its own return type on one line and not on another: a call compiled against it fails on the other).
    io.vertx.core.net.TCPSSLOptions tcp = net;
    tcp.setTcpKeepAlive(true);
    tcp.setTcpKeepAliveIdleSeconds(o.getKeepAliveSeconds());
    tcp.setTcpKeepAliveIntervalSeconds(Math.max(1, o.getKeepAliveSeconds() / 3));
    tcp.setTcpKeepAliveCount(3);
    return net;
  }

  /** How keep-alive is set, for the start-up line and {@code check-config}: {@code 300s}, {@code off}, or Vert.x's. */
  public static String describeKeepAlive(FrameEchoOptions o) {
    NetServerOptions net = o.getNetServerOptions();
    if (net.isTcpKeepAlive()) {
      return "netServerOptions (idle " + orKernel(net.getTcpKeepAliveIdleSeconds()) + ", interval "
        + orKernel(net.getTcpKeepAliveIntervalSeconds()) + ", count " + orKernel(net.getTcpKeepAliveCount()) + ")";
    }
    return o.getKeepAliveSeconds() == 0 ? "off" : !o.getUnixSocket().isEmpty() ? "off (unix socket)" : o.getKeepAliveSeconds() + "s";
  }

  private static String orKernel(int value) {
    return value > 0 ? String.valueOf(value) : "the kernel's";
  }

  /**
   * Vert.x options that would bypass what frame-echo promises (responses in order, reading paused by the write queue
   * and the buffer budget, every close with its reason, a lingering close) are refused, each with why.
   *
   * @throws IllegalArgumentException naming the key ({@code netServerOptions.…})
   */
  private static void checkPromises(FrameEchoOptions o) {
    NetServerOptions net = o.getNetServerOptions();
    NetServerOptions vertx = new NetServerOptions();
    if (net.isRegisterWriteHandler()) {
      throw refused("registerWriteHandler", "it registers an event-bus consumer per socket through which any code may write "
        + "to the socket past frame-echo's ordered responses and buffer budget");
    }
    if (net.getTrafficShapingOptions() != null) {
      throw refused("trafficShapingOptions", "Netty's traffic shaper turns reading back on behind frame-echo's read gate, so "
        + "bytes held grow past maxBufferedBytes and the write queue while connections count as paused; bound clients with "
        + "maxConnectionsPerIp and maxBufferedBytes");
    }
    for (String[] idle : new String[][] {{"idleTimeout", String.valueOf(net.getIdleTimeout())},
        {"readIdleTimeout", String.valueOf(net.getReadIdleTimeout())}, {"writeIdleTimeout", String.valueOf(net.getWriteIdleTimeout())}}) {
      if (!"0".equals(idle[1])) {
        throw refused(idle[0], "Vert.x would close connections itself, without their responses or a close reason; use "
          + "idleTimeoutMs, frameTimeoutMs and writeStallTimeoutMs");
      }
    }
    if (net.getIdleTimeoutUnit() != vertx.getIdleTimeoutUnit()) {
      throw refused("idleTimeoutUnit", "the unit of Vert.x's idleTimeout, which is refused; use idleTimeoutMs");
    }
    if (net.getSoLinger() != vertx.getSoLinger()) {
      throw refused("soLinger", "SO_LINGER makes a close reset the connection (0) or wait in the kernel instead of "
        + "frame-echo's lingering close, and a reset discards responses the client has not read yet");
    }
  }

  private static IllegalArgumentException refused(String key, String why) {
    return new IllegalArgumentException("netServerOptions." + key + ": refused: " + why);
  }

  /**
   * {@code keepAliveSeconds} and Vert.x's {@code tcpKeepAlive} both set would leave one ignored: refused.
   *
   * @throws IllegalArgumentException naming the key
   */
  private static void checkKeepAlive(FrameEchoOptions o) {
    if (o.getNetServerOptions().isTcpKeepAlive() && o.getKeepAliveSeconds() != FrameEchoOptions.DEFAULT_KEEP_ALIVE_SECONDS) {
      throw new IllegalArgumentException("keepAliveSeconds: netServerOptions.tcpKeepAlive sets keep-alive itself and would "
        + "win; set one of them (keepAliveSeconds alone, or netServerOptions' tcpKeepAlive with its idle, interval and count)");
    }
  }

  /**
   * The PROXY protocol's settings that would be ignored or cannot work are refused: {@code proxyTrustedPeers} without
   * {@code useProxyProtocol}, and the PROXY protocol with TLS served here (terminate TLS at the balancer).
   *
   * @throws IllegalArgumentException naming the key
   */
  private static void checkProxyProtocol(FrameEchoOptions o) {
    if (!o.getProxyTrustedPeers().isBlank() && !o.getNetServerOptions().isUseProxyProtocol()) {
      throw new IllegalArgumentException("proxyTrustedPeers: set with netServerOptions.useProxyProtocol false, so it would be "
        + "ignored");
    }
    if (o.getNetServerOptions().isUseProxyProtocol() && o.isTls()) {
      throw new IllegalArgumentException("netServerOptions.useProxyProtocol: not supported with TLS served by frame-echo; "
        + "terminate TLS at the balancer, or serve plain TCP behind it");
    }
  }

  /** How the PROXY protocol is set, for the start-up line and {@code check-config}. */
  public static String describeProxyProtocol(FrameEchoOptions o) {
    return !o.getNetServerOptions().isUseProxyProtocol() ? "off"
      : "v1/v2 from " + (o.getProxyTrustedPeers().isBlank() ? "any peer" : o.getProxyTrustedPeers().replace(" ", ""));
  }
}
