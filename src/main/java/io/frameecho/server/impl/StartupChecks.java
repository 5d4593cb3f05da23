package io.frameecho.server.impl;

import io.frameecho.server.impl.shared.ServedAddresses;
import io.frameecho.server.EchoHandler;
import io.frameecho.server.EventBusHandler;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.HandlerOptions;
import io.frameecho.server.RequestHandler;
import io.frameecho.server.TlsOptions;
import io.frameecho.server.impl.netty.Internals;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServerOptions;
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
      options.getIdleGiveWayMs(), budgetLimit, options.getBudgetGraceMs(), options.getIdleTimeoutMs(), options.describeKeepAlive(), options.describeProxyProtocol(), options.getFrameTimeoutMs(),
      options.getWriteStallTimeoutMs(), options.getLingerTimeoutMs(), options.getShutdownTimeoutMs());
  }

  /** Vert.x's options from {@code netServerOptions}, then ours on top. */
  static NetServerOptions netServerOptions(FrameEchoOptions options) {
    try {
      options.checkTls();
      options.checkListenAddress();
      options.checkKeepAlive();
      options.checkPromises();
      options.checkProxyProtocol();
      if (options.getNetServerOptions().isUseProxyProtocol() && !Internals.proxyCodecPresent()) {
        throw new IllegalArgumentException("netServerOptions.useProxyProtocol: needs io.netty:netty-codec-haproxy on the class "
          + "path (the runnable jar has it): add it to the application, at its Netty's version");
      }
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("invalid frame-echo configuration: " + e.getMessage(), e);
    }
    // The PROXY protocol's header is read by frame-echo once a socket has its slot (ProxyHeaders); Vert.x's own reader
    // would run before the socket is counted anywhere.
    NetServerOptions netOptions = options.keepAlive(new NetServerOptions(options.getNetServerOptions()))
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
}
