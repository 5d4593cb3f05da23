package io.frameecho.server;

import io.vertx.core.Future;
import io.frameecho.server.impl.FrameEchoServerImpl;
import io.frameecho.server.impl.EventBusHandler;
import io.frameecho.server.impl.StartupChecks;
import io.frameecho.server.impl.connection.EchoHandler;
import io.vertx.core.VerticleBase;
import io.vertx.core.VertxException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;


import java.lang.reflect.InvocationTargetException;
import java.util.Objects;

/**
 * Deploys a {@link FrameEchoServer} configured by the verticle's {@code config()} (see
 * {@link FrameEchoOptions} for the keys), or by options given in code. The book's {@code main()}: one instance owns one server on its
 * event loop; several instances share the port across event loops.
 * <pre>{@code
 * FrameEchoVerticle verticle = new FrameEchoVerticle();
 * vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(new JsonObject().put("port", 0)))
 *   .onSuccess(id -> System.out.println("frame-echo on port " + verticle.actualPort()));
 *
 * // or typed, with Vert.x's own option types:
 * vertx.deployVerticle(new FrameEchoVerticle(new FrameEchoOptions().setPort(0)
 *   .setNetServerOptions(new NetServerOptions().setSsl(true).setKeyCertOptions(new PfxOptions().setPath("server.p12")
 *     .setPassword(password))), request -> Future.succeededFuture(request)));
 * }</pre>
 */
public class FrameEchoVerticle extends VerticleBase {

  private static final Logger log = LoggerFactory.getLogger(FrameEchoVerticle.class);

  /** The application given in code, or null to build the one the config's {@code handler} names. */
  private final RequestHandler requestHandler;
  /** The options given in code, or null to read them from {@code config()}. */
  private final FrameEchoOptions options;
  /** Where its connections report, or null for the built-in meters ({@code metrics.enabled}). */
  private FrameEchoMetrics metrics;
  private FrameEchoServerImpl server;
  private int metricsPort;

  /** What the launcher deploys: the application is the one the config's {@code handler} section names (echo by default). */
  public FrameEchoVerticle() {
    this.requestHandler = null;
    this.options = null;
  }

  /** A server answering with {@code requestHandler}, whatever the config's {@code handler.type}. */
  public FrameEchoVerticle(RequestHandler requestHandler) {
    this.requestHandler = Objects.requireNonNull(requestHandler, "requestHandler");
    this.options = null;
  }

  /**
   * A server with {@code options} (copied now), answering with the application their {@code handler} names; the
   * deployment's {@code config()} must then be empty (it would be ignored).
   */
  public FrameEchoVerticle(FrameEchoOptions options) {
    this.requestHandler = null;
    this.options = new FrameEchoOptions(Objects.requireNonNull(options, "options"));
  }

  /** A server with {@code options} (copied now) answering with {@code requestHandler}; {@code config()} must be empty. */
  public FrameEchoVerticle(FrameEchoOptions options, RequestHandler requestHandler) {
    this.requestHandler = Objects.requireNonNull(requestHandler, "requestHandler");
    this.options = new FrameEchoOptions(Objects.requireNonNull(options, "options"));
  }

  /**
   * Reports its server's connection events to {@code metrics} (an application's own metrics system, say) instead
   * of the built-in meters; call it before deploying.
   */
  public FrameEchoVerticle metrics(FrameEchoMetrics metrics) {
    this.metrics = Objects.requireNonNull(metrics, "metrics");
    return this;
  }

  @Override
  public Future<?> start() {
    String notOnEventLoop = StartupChecks.notOnEventLoop(context);
    if (notOnEventLoop != null) {
      return Future.failedFuture(new IllegalStateException(notOnEventLoop));
    }
    FrameEchoOptions options;
    try {
      if (this.options != null && !config().isEmpty()) {
        throw new IllegalArgumentException("options were given in code, so the deployment's config would be ignored: "
          + "give one or the other");
      }
      options = this.options != null ? this.options : new FrameEchoOptions(config());
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(new IllegalArgumentException("invalid frame-echo configuration: " + e.getMessage()));
    }
    RequestHandler handler;
    try {
      handler = requestHandler != null ? requestHandler : configuredHandler(options);
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(new IllegalArgumentException("invalid frame-echo configuration: " + e.getMessage(), e));
    }
    server = new FrameEchoServerImpl(vertx, options);
    server.requestHandler(handler);
    if (metrics != null) {
      server.metrics(metrics);
    }
    MetricsOptions metrics = options.getMetrics();
    // The metrics endpoint is bound first: a process whose metrics port is taken fails before it says it is
    // listening, so that a restart that waits for that line never stops the old process for a new one that dies.
    // (A failed deployment closes what Vert.x opened for it.)
    // The meters are the server's; the HTTP port only when asked for (an application may export them itself).
    boolean endpoint = metrics.isEnabled() && metrics.isEndpoint();
    Future<Integer> operations = !endpoint ? Future.succeededFuture(0) : server.openOperationsEndpoint(metrics)
      .recover(e -> Future.failedFuture(cannotListen("metrics endpoint ", metrics.getHost(), metrics.getPort(), e)));
    return operations.compose(port -> server.listen()
      .recover(e -> Future.failedFuture(e instanceof IllegalArgumentException || e instanceof IllegalStateException ? e
        : cannotListen("", options.getHost(), options.getPort(), e)))
      .onSuccess(s -> {
        if (endpoint) {
          metricsPort = port;
          String allInterfaces = "0.0.0.0".equals(metrics.getHost()) || "::".equals(metrics.getHost()) ? " (all interfaces)" : "";
          String notScraped = server.whyMetersNotScraped();
          if (notScraped == null) {
            log.info("frame-echo metrics on http://{}:{}/metrics, health on /health/live and /health/ready{}", metrics.getHost(),
              metricsPort, allInterfaces);
          } else {
            // A registry that cannot be scraped: the line must not advertise a /metrics that would answer 404.
            log.warn("frame-echo health on http://{}:{}/health/live and /health/ready{}, but no /metrics there: {}; to serve "
              + "it, give Vert.x a PrometheusMeterRegistry (or a CompositeMeterRegistry holding one), or set metrics.endpoint "
              + "false and export that registry yourself", metrics.getHost(), metricsPort, allInterfaces, notScraped);
          }
        }
      }));
  }

  /** Names the address that could not be bound; the cause's text without Netty's prefix (bind(..) failed with error(-98): ...). */
  private static VertxException cannotListen(String what, String host, int port, Throwable cause) {
    String reason = cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
    reason = reason.replaceFirst("^\\w+\\(\\.\\.\\) failed with error\\(-?\\d+\\): ", "");
    return new VertxException(what + "cannot listen on " + host + ":" + port + ": " + reason, cause);
  }

  private RequestHandler configuredHandler(FrameEchoOptions options) {
    HandlerOptions h = options.getHandler();
    return switch (h.getType()) {
      case HandlerOptions.ECHO -> new EchoHandler();
      case HandlerOptions.EVENT_BUS -> new EventBusHandler(vertx, h);
      default -> handlerNamed(h.getType());
    };
  }

  /** An instance of the {@link RequestHandler} class {@code handler.type} names (checked when the options were read). */
  private static RequestHandler handlerNamed(String name) {
    try {
      return HandlerOptions.handlerClass(name).getConstructor().newInstance();
    } catch (InvocationTargetException e) {
      throw new IllegalArgumentException("handler.type: " + name + "'s constructor failed: " + e.getCause(), e.getCause());
    } catch (ReflectiveOperationException | LinkageError e) {
      throw new IllegalArgumentException("handler.type: " + name + " cannot be made by its public no-argument constructor: " + e, e);
    }
  }

  /**
   * Undeploy (and SIGTERM, through the launcher) shuts the server down gracefully: readiness turns false,
   * then after {@code drainDelayMs} the server stops accepting and drains.
   */
  @Override
  public Future<?> stop() {
    return server == null ? Future.succeededFuture() : server.drainAndShutdown();
  }

  /**
   * Certificate rotation for this instance's server: see {@link FrameEchoServer#updateTls}. (To rotate every instance
   * of every deployment, re-reading the same files: {@link FrameEchoServer#reloadTls(io.vertx.core.Vertx)}.)
   */
  public Future<Void> updateTls(io.vertx.core.net.ServerSSLOptions tls) {
    return server == null ? Future.failedFuture(new IllegalStateException("not deployed")) : server.updateTls(tls);
  }

  /**
   * The port of the metrics and health endpoint, once deployed with {@code metrics.enabled} and {@code metrics.endpoint};
   * 0 otherwise (no HTTP port was opened).
   */
  public int metricsPort() {
    return metricsPort;
  }

  /** The port this instance bound, once deployed; 0 before; -1 on a unix socket. */
  public int actualPort() {
    return server == null ? 0 : server.actualPort();
  }
}
