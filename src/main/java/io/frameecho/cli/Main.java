package io.frameecho.cli;

import io.frameecho.server.FrameEchoOptions;
import io.vertx.core.Vertx;
import io.vertx.core.VertxBuilder;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.transport.Transport;
import org.slf4j.LoggerFactory;
import io.vertx.launcher.application.HookContext;
import io.vertx.launcher.application.VertxApplication;
import io.vertx.launcher.application.VertxApplicationHooks;
import io.vertx.micrometer.MetricsDomain;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.vertx.micrometer.VertxPrometheusOptions;

import java.util.Arrays;

/**
 * The jar's entry point: {@code client} and {@code bench} run our commands; any other argument list goes
 * unchanged to the Vert.x launcher, which deploys the jar's {@code Main-Verticle}. Extending the launcher
 * (rather than calling its {@code main}) is what lets it find this jar's manifest; its hooks fold the
 * environment into the configuration and switch Vert.x's own metrics on when {@code metrics.enabled}.
 */
public final class Main extends VertxApplication {

  private Main(String[] args, VertxApplicationHooks hooks) {
    super(args, hooks);
  }

  public static void main(String[] args) {
    if (args.length > 0 && args[0].equals("client")) {
      System.exit(ClientCommand.commandLine(System.out, System.err).execute(rest(args)));
    }
    if (args.length > 0 && args[0].equals("bench")) {
      System.exit(BenchCommand.commandLine(System.out, System.err).execute(rest(args)));
    }
    JsonObject config;
    try {
      config = EnvironmentConfig.effective(confArgument(args), System.getenv());
    } catch (IllegalArgumentException e) {
      System.err.println("invalid frame-echo configuration: " + e.getMessage());
      System.exit(1);
      return;
    }
    int exitCode = new Main(args, new Hooks(config)).launch();
    if (exitCode != 0) {
      System.exit(exitCode);
    }
  }

  /** The value of the launcher's {@code -conf} option, or null. */
  static String confArgument(String[] args) {
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if ((arg.equals("-conf") || arg.equals("--conf")) && i + 1 < args.length) {
        return args[i + 1];
      }
      if (arg.startsWith("-conf=") || arg.startsWith("--conf=")) {
        return arg.substring(arg.indexOf('=') + 1);
      }
    }
    return null;
  }

  private static String[] rest(String[] args) {
    return Arrays.copyOfRange(args, 1, args.length);
  }

  private static final class Hooks implements VertxApplicationHooks {

    private final JsonObject config;

    Hooks(JsonObject config) {
      this.config = config;
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
      return Vertx.builder().with(options).withTransport(transport);
    }

    @Override
    public void beforeStartingVertx(HookContext context) {
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

    @Override
    public JsonObject afterConfigParsed(JsonObject parsed) {
      return config.copy();
    }
  }
}
