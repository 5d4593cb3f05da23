package io.frameecho.cli;

import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.impl.ops.Operations;
import io.vertx.core.Vertx;
import io.vertx.core.VertxBuilder;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.transport.Transport;
import io.vertx.launcher.application.ExitCodes;
import io.vertx.launcher.application.HookContext;
import io.vertx.launcher.application.VertxApplication;
import io.vertx.launcher.application.VertxApplicationHooks;
import io.vertx.micrometer.MetricsDomain;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.vertx.micrometer.VertxPrometheusOptions;
import org.slf4j.LoggerFactory;

import java.io.PrintStream;
import java.util.concurrent.TimeUnit;

/**
 * The Vert.x 5 application launcher, which deploys the verticle {@link Main} names. It is a class of its
 * own, loaded only when the server runs, because loading the launcher starts logging, and {@link Main}
 * checks the logging variables first. Its hooks fold the environment into the configuration, pick the transport,
 * switch Vert.x's own metrics on when {@code metrics.enabled}, and turn a failure to start into one line
 * and an exit status (unless {@code FRAME_ECHO_DEBUG} asks for the launcher's own report with its stack trace).
 */
final class ServerLauncher extends VertxApplication {

  /** Without the launcher's own reprint of its whole usage (in ANSI colours, even into a pipe) after a bad option. */
  ServerLauncher(String[] args, VertxApplicationHooks hooks) {
    super(args, hooks, false, false);
  }

  static final class Hooks implements VertxApplicationHooks {

    private final JsonObject config;
    private final boolean debug;
    private final PrintStream err;
    /** The metrics and health endpoint's own Vert.x (one event loop), while the server runs with metrics on. */
    private Vertx endpointVertx;
    /** The frame server's transport: the endpoint's Vert.x uses it too (reusePort needs a native one). */
    private Transport transport = Transport.NIO;

    Hooks(JsonObject config, boolean debug, PrintStream err) {
      this.config = config;
      this.debug = debug;
      this.err = err;
    }

    /** The {@code transport} setting: the requested native transport, or NIO with one line saying why. */
    @Override
    public VertxBuilder createVertxBuilder(VertxOptions options) {
      String wanted = config.getString("transport", FrameEchoOptions.DEFAULT_TRANSPORT);
      Transport transport = switch (wanted) {
        case "nio" -> Transport.NIO;
        case "epoll" -> Transport.EPOLL;
        case "io_uring" -> Transport.IO_URING;
        default -> Transport.EPOLL;
      };
      if (transport == null || !transport.available()) {
        Throwable why = transport == null ? null : transport.unavailabilityCause();
        LoggerFactory.getLogger(Main.class).warn("transport {} is not available here ({}); using nio",
          wanted.equals("auto") ? "epoll" : wanted, why == null ? "not on this platform" : why.toString());
        transport = Transport.NIO;
      }
      this.transport = transport;
      return Vertx.builder().with(options).withTransport(transport);
    }

    @Override
    public void beforeStartingVertx(HookContext context) {
      HangupReload.install(new FrameEchoOptions(config).isTls());
      Object metrics = config.getValue("metrics");
      if (metrics instanceof JsonObject m && Boolean.TRUE.equals(m.getValue("enabled"))) {
        // Vert.x's own TCP, event-bus and JVM meters go to the Prometheus registry frame-echo serves.
        context.vertxOptions().setMetricsOptions(new MicrometerMetricsOptions()
          .setEnabled(true)
          .setJvmMetricsEnabled(true)
          // The only HTTP server is the metrics endpoint itself; its meters would only be noise.
          .addDisabledMetricsCategory(MetricsDomain.HTTP_SERVER)
          .setPrometheusOptions(new VertxPrometheusOptions().setEnabled(true)));
      }
    }

    /**
     * SIGHUP starts to reload the TLS files ({@link HangupReload}). With the metrics endpoint on, it gets an event
     * loop of its own: on the frame server's, a probe waits behind every read queued there, and under a burst of
     * small frames /health/live took over a second.
     */
    @Override
    public void afterVertxStarted(HookContext context) {
      HangupReload.vertxStarted(context.vertx());
      Object metrics = config.getValue("metrics");
      // Main.withJarDefaults has put "endpoint": true into a metrics section that did not say.
      if (metrics instanceof JsonObject m && Boolean.TRUE.equals(m.getValue("enabled")) && Boolean.TRUE.equals(m.getValue("endpoint"))) {
        // On the frame server's transport: with netServerOptions.reusePort the endpoint joins its port's reuseport
        // group (a restart), which NIO would ignore.
        endpointVertx = Vertx.builder().with(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(1)
          .setInternalBlockingPoolSize(1)).withTransport(transport).build();
        // From this (non-Vert.x) thread: a plain event-loop context of the endpoint's Vert.x.
        Operations.openEndpointOn(context.vertx(), endpointVertx.getOrCreateContext());
      }
    }

    @Override
    public void afterVertxStopped(HookContext context) {
      closeEndpointVertx();
    }

    private void closeEndpointVertx() {
      if (endpointVertx != null) {
        try {
          endpointVertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception ignored) {
          // exiting anyway
        }
        endpointVertx = null;
      }
    }

    @Override
    public JsonObject afterConfigParsed(JsonObject parsed) {
      return config.copy();
    }

    /** Vert.x itself did not start (e.g. a cluster that cannot form): one line, exit 11. */
    @Override
    public void afterFailureToStartVertx(HookContext context, Throwable t) {
      failed(context, "Vert.x could not start: " + Main.describe(t), ExitCodes.VERTX_INITIALIZATION);
    }

    /** The verticle did not start (a port in use, an unreadable TLS file): one line, exit 15. */
    @Override
    public void afterFailureToDeployVerticle(HookContext context, Throwable t) {
      failed(context, "could not start: " + (t == null ? "the deployment did not finish in time" : Main.describe(t)),
        ExitCodes.VERTX_DEPLOYMENT);
    }

    /**
     * The launcher calls these hooks before it logs the failure with a stack trace; unless debugging,
     * say it in one line, close Vert.x (bounded) and exit with the launcher's own status.
     */
    private void failed(HookContext context, String line, int status) {
      if (debug) {
        return;
      }
      err.println("frame-echo: " + line);
      closeEndpointVertx();
      Vertx vertx = context.vertx();
      if (vertx != null) {
        try {
          vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception ignored) {
          // exiting anyway
        }
      }
      System.exit(status);
    }
  }
}
