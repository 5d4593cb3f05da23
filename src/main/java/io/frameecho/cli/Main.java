package io.frameecho.cli;

import io.frameecho.server.impl.shared.EditDistance;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.FrameEchoServer;
import io.frameecho.server.FrameEchoVerticle;
import io.frameecho.server.MetricsOptions;
import io.frameecho.server.TlsOptions;
import io.frameecho.server.impl.StartupChecks;
import io.vertx.core.json.JsonObject;
import io.vertx.launcher.application.VertxApplicationHooks;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The jar's entry point. {@code client}, {@code bench} and {@code check-config} run our commands;
 * {@code --help} and {@code --version} answer at once; any other argument list goes to the Vert.x launcher
 * ({@link ServerLauncher}), which deploys the jar's {@code Main-Verticle}, once the configuration it will
 * get (file, environment, inline JSON) has been checked here. Every mistake ends with one line on stderr
 * starting with {@code frame-echo:} and a documented exit status; {@code FRAME_ECHO_DEBUG=1} adds the
 * stack trace.
 * <p>
 * This class must not touch logging before {@link LogSettings} has checked the logging variables.
 */
public final class Main {

  /** Exit statuses (src/docs/OPERATING.md's table). */
  static final int OK = 0;
  static final int INVALID_CONFIGURATION = 1;
  static final int USAGE = 2;

  static final List<String> SUBCOMMANDS = List.of("client", "bench", "check-config");
  static final String DEBUG_VARIABLE = "FRAME_ECHO_DEBUG";

  private Main() {
  }

  public static void main(String[] args) {
    Integer status = run(args, System.getenv(), System.out, System.err);
    if (status != null) {
      System.out.flush();
      System.exit(status);
    }
    // null: the server runs; its threads keep the JVM alive.
  }

  /**
   * Runs the command line.
   *
   * @return the exit status, or null when the server was launched and runs on
   */
  static Integer run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
    boolean debug = debug(env);
    try {
      LogSettings.check(env).forEach(System::setProperty);
    } catch (IllegalArgumentException e) {
      return fail(err, e, debug, INVALID_CONFIGURATION);
    }
    String first = args.length > 0 ? args[0] : null;
    if (first != null) {
      switch (first) {
        case "client":
          return ClientCommand.commandLine(out, err).execute(rest(args));
        case "bench":
          return BenchCommand.commandLine(out, err).execute(rest(args));
        case "check-config":
          return checkConfig(rest(args), env, out, err, debug);
        case "-h", "--help", "-help", "help":
          out.print(usage());
          return OK;
        case "-V", "--version", "-version", "version":
          for (String line : Versions.lines()) {
            out.println(line);
          }
          return OK;
        case "--launcher-help":
          return new ServerLauncher(new String[] {"--help"}, VertxApplicationHooks.DEFAULT).launch();
        default:
          if (!first.startsWith("-")) {
            String problem = unknownVerticle(first);
            if (problem != null) {
              err.println("frame-echo: " + problem);
              return USAGE;
            }
          }
      }
    }
    String problem = launcherArgumentProblem(args);
    if (problem != null) {
      err.println("frame-echo: " + problem);
      return USAGE;
    }
    JsonObject config;
    try {
      config = checkedConfig(args, env);
    } catch (IllegalArgumentException e) {
      return fail(err, e, debug, INVALID_CONFIGURATION);
    }
    // The launcher finds the Main-Verticle attribute only in the manifest whose Main-Class is the launcher
    // class itself; naming frame-echo's verticle here deploys it by name (so HA can redeploy it) all the same.
    String[] launcherArgs = deploysFrameEcho(args) ? prepend(FrameEchoVerticle.class.getName(), args) : args;
    if (deploysFrameEcho(args)) {
      AllocatorSettings.apply(new FrameEchoOptions(config).getMaxFrameSize());
    }
    Signals.install();
    int exitCode = new ServerLauncher(launcherArgs, new ServerLauncher.Hooks(config, debug, err)).launch();
    return exitCode == 0 ? null : exitCode;
  }

  private static boolean debug(Map<String, String> env) {
    String value = env.get(DEBUG_VARIABLE);
    return value != null && !value.isBlank() && !value.equals("0") && !value.equalsIgnoreCase("false");
  }

  /** The configuration the launcher will deploy, checked as the verticle will check it. */
  static JsonObject checkedConfig(String[] args, Map<String, String> env) {
    JsonObject config = withJarDefaults(EnvironmentConfig.effective(confArgument(args), env));
    if (deploysFrameEcho(args)) {
      FrameEchoOptions options = new FrameEchoOptions(config);
      TlsOptions tls = options.getTls();
      if (tls != null) {
        requireReadable("tls.certPath", tls.getCertPath());
        requireReadable("tls.keyPath", tls.getKeyPath());
      }
    }
    return config;
  }

  /**
   * The jar's one default that is not the library's: a {@code metrics} section that does not say {@code endpoint} gets
   * {@code "endpoint": true}. The jar has always served /metrics and /health with {@code metrics.enabled}, and a
   * configuration it reads means what it did; an application that embeds the server opens no HTTP port of ours
   * unless it asks. Done here, so that the verticle, {@code check-config} and the launcher's hooks read one value.
   */
  static JsonObject withJarDefaults(JsonObject config) {
    if (config.getValue("metrics") instanceof JsonObject metrics && !metrics.containsKey("endpoint")) {
      config.put("metrics", metrics.copy().put("endpoint", true));
    }
    return config;
  }

  private static void requireReadable(String key, String path) {
    if (path == null) {
      return;
    }
    Path file = Path.of(path);
    if (!Files.exists(file)) {
      throw new IllegalArgumentException(key + ": " + path + " does not exist");
    }
    if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
      throw new IllegalArgumentException(key + ": " + path + " is not a readable file");
    }
  }

  /** True unless the first argument names another verticle class (the launcher's positional argument). */
  private static boolean deploysFrameEcho(String[] args) {
    return args.length == 0 || args[0].startsWith("-");
  }

  /** {@code check-config [launcher options]}: validate what the server would get, bind nothing. */
  private static int checkConfig(String[] args, Map<String, String> env, PrintStream out, PrintStream err, boolean debug) {
    for (String arg : args) {
      if (arg.equals("-h") || arg.equals("--help")) {
        out.println("Usage: java -jar frame-echo.jar check-config [-conf FILE|JSON] [other launcher options]");
        out.println("Checks the configuration the server would get (the -conf file or JSON, then the FRAME_ECHO_*");
        out.println("variables, the TLS files) and exits: 0 when it is valid, 1 with one line naming the problem.");
        out.println("Nothing is bound: a port already in use is found only when the server starts.");
        return OK;
      }
    }
    if (args.length > 0 && !args[0].startsWith("-")) {
      err.println("frame-echo: check-config checks frame-echo's own configuration; '" + args[0]
        + "' names another verticle, whose configuration frame-echo does not know");
      return USAGE;
    }
    // The server's own parsing: what the server would refuse, check-config refuses, in the same words and status.
    String problem = launcherArgumentProblem(args);
    if (problem != null) {
      err.println("frame-echo: " + problem);
      return USAGE;
    }
    try {
      FrameEchoOptions options = new FrameEchoOptions(checkedConfig(args, env));
      checkTlsMaterial(options);
      MetricsOptions metrics = options.getMetrics();
      out.println("frame-echo: configuration is valid: frame "
        + (options.getUnixSocket().isEmpty() ? "port " + where(options.getHost(), options.getPort()) : "unix socket " + options.getUnixSocket())
        + (options.isTls() ? " with TLS" : "") + ", keep-alive " + StartupChecks.describeKeepAlive(options)
        + (options.getNetServerOptions().isUseProxyProtocol() ? ", PROXY protocol " + StartupChecks.describeProxyProtocol(options) : "") + ", metrics "
        + (!metrics.isEnabled() ? "off" : metrics.isEndpoint() ? "on http://" + where(metrics.getHost(), metrics.getPort()) + "/metrics"
          : "on, without an endpoint")
        + " (nothing was bound)");
      return OK;
    } catch (IllegalArgumentException e) {
      return fail(err, e, debug, INVALID_CONFIGURATION);
    }
  }

  /**
   * The key material a TLS configuration names is loaded as the server would load it (a file that is not a key, a
   * wrong password, a trust store that does not open), on a Vert.x of its own that binds nothing.
   */
  private static void checkTlsMaterial(FrameEchoOptions options) {
    if (!options.isTls()) {
      return;
    }
    io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
    try {
      FrameEchoServer.checkTls(vertx, options).toCompletionStage().toCompletableFuture().get(60, java.util.concurrent.TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      String reason = e.getCause().getMessage() == null ? e.getCause().toString() : e.getCause().getMessage();
      // A setting the TLS engine does not support names its key already.
      throw new IllegalArgumentException(e.getCause() instanceof IllegalArgumentException ? reason
        : (options.getTls() != null ? "tls: " : "netServerOptions: ") + reason, e.getCause());
    } catch (Exception e) {
      throw new IllegalArgumentException("TLS key material: not checked: " + e, e);
    } finally {
      vertx.close();
    }
  }

  /** {@code 0.0.0.0:1234 (all interfaces)}, {@code 127.0.0.1:9464}. */
  static String where(String host, int port) {
    String address = (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    return host.equals("0.0.0.0") || host.equals("::") ? address + " (all interfaces)" : address;
  }

  private static int fail(PrintStream err, IllegalArgumentException e, boolean debug, int status) {
    String message = e.getMessage();
    boolean logging = message.startsWith(LogSettings.LEVEL) || message.startsWith(LogSettings.FORMAT);
    err.println("frame-echo: " + (logging ? "" : "invalid configuration: ") + message);
    if (debug) {
      e.printStackTrace(err);
    }
    return status;
  }

  /**
   * Null when {@code name} is a class the launcher can deploy; otherwise the one line that says what is
   * wrong: a mistyped subcommand (with the nearest one) or a verticle class that is not there.
   */
  static String unknownVerticle(String name) {
    if (name.contains(".")) {
      try {
        Class.forName(name, false, Main.class.getClassLoader());
        return null;
      } catch (ClassNotFoundException | LinkageError e) {
        return "no verticle class " + name + " on the class path (a verticle class name as the first argument"
          + " replaces frame-echo's; see --help)";
      }
    }
    String nearest = null;
    for (String s : SUBCOMMANDS) {
      if (EditDistance.between(name.toLowerCase(java.util.Locale.ROOT), s) <= 2) {
        nearest = s;
      }
    }
    return "unknown subcommand '" + name + "'" + (nearest != null ? " (did you mean '" + nearest + "'?)" : "")
      + "; subcommands: " + String.join(", ", SUBCOMMANDS) + "; run --help for usage";
  }

  /** The Vert.x 5 launcher's options that take a value, and its flags (it ignores case). */
  private static final List<String> LAUNCHER_VALUE_OPTIONS = List.of("-options", "--options", "-vertx-options", "--vertx-options",
    "-cluster-port", "--cluster-port", "-cluster-host", "--cluster-host", "-cluster-public-port", "--cluster-public-port",
    "-cluster-public-host", "--cluster-public-host", "-deployment-options", "--deployment-options", "-instances", "--instances",
    "-conf", "--conf");
  private static final List<String> LAUNCHER_FLAGS = List.of("-c", "-cluster", "--cluster", "-w", "-worker", "--worker",
    "-vt", "-virtual-thread", "--virtual-thread");

  /**
   * One line for an argument the launcher would refuse (it would print its whole usage after the error),
   * or null. Checked: unknown options, an option without its value, and stray arguments.
   */
  static String launcherArgumentProblem(String[] args) {
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (i == 0 && !arg.startsWith("-")) {
        continue; // the verticle class, checked on its own
      }
      if (!arg.startsWith("-")) {
        return "unexpected argument '" + arg + "' (options come as -name value; run --help for usage)";
      }
      String name = (arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg).toLowerCase(java.util.Locale.ROOT);
      if (LAUNCHER_VALUE_OPTIONS.contains(name)) {
        if (!arg.contains("=")) {
          if (i + 1 >= args.length) {
            return arg + " needs a value; run --help for usage";
          }
          i++;
        }
      } else if (!LAUNCHER_FLAGS.contains(name)) {
        String nearest = null;
        for (String known : LAUNCHER_VALUE_OPTIONS) {
          if (known.startsWith("-") && !known.startsWith("--") && EditDistance.between(name, known) <= 2) {
            nearest = known;
          }
        }
        return "unknown option '" + arg + "'" + (nearest != null ? " (did you mean '" + nearest + "'?)" : "")
          + "; run --help for frame-echo's options, --launcher-help for all of the launcher's";
      }
    }
    return null;
  }

  /** One line for a failure: its message (the class name when it has none), no stack trace. */
  static String describe(Throwable t) {
    String message = t.getMessage();
    if (message == null) {
      message = t.getClass().getSimpleName() + (t.getCause() != null && t.getCause().getMessage() != null ? ": " + t.getCause().getMessage() : "");
    }
    return message.replace('\n', ' ');
  }

  /** A bad option of a subcommand: one line naming it (not the whole usage), exit status 2. */
  static picocli.CommandLine.IParameterExceptionHandler oneLineUsageErrors(String subcommand) {
    return (e, args) -> {
      e.getCommandLine().getErr().println("frame-echo " + subcommand + ": " + e.getMessage() + " (" + subcommand + " --help lists the options)");
      return USAGE;
    };
  }

  /** A subcommand that failed unexpectedly: one line, exit status 1; the stack trace with {@code FRAME_ECHO_DEBUG}. */
  static picocli.CommandLine.IExecutionExceptionHandler oneLineFailures(String subcommand) {
    return (e, commandLine, parseResult) -> {
      commandLine.getErr().println("frame-echo " + subcommand + ": " + describe(e));
      if (debug(System.getenv())) {
        e.printStackTrace(commandLine.getErr());
      }
      return 1;
    };
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

  private static String[] prepend(String first, String[] args) {
    String[] all = new String[args.length + 1];
    all[0] = first;
    System.arraycopy(args, 0, all, 1, args.length);
    return all;
  }

  private static String[] rest(String[] args) {
    return Arrays.copyOfRange(args, 1, args.length);
  }

  static String usage() {
    return String.join("\n",
      "frame-echo " + Versions.frameEcho() + ": the length-prefixed echo server of \"Build Your Own Redis\", chapter 06,",
      "as a Vert.x verticle. A frame is a 4-byte little-endian length and that many bytes; the server answers",
      "each request frame with the same frame, pipelined, in order.",
      "",
      "Usage:",
      "  java -jar frame-echo.jar [launcher options]      run the server (default: port "
        + FrameEchoOptions.DEFAULT_PORT + " on all interfaces)",
      "  java -jar frame-echo.jar client [MESSAGE...]     send messages, print each echo (client --help)",
      "  java -jar frame-echo.jar bench [options]         load-test a server, report latency (bench --help)",
      "  java -jar frame-echo.jar check-config [-conf X]  check a configuration and exit 0/1, binding nothing",
      "  java -jar frame-echo.jar --version               frame-echo, Vert.x and Java versions (also -V)",
      "",
      "Common launcher options:",
      "  -conf FILE|JSON            settings: a file or inline JSON (conf/config.json lists every key and default)",
      "  -instances N               N servers sharing the port, one per event loop",
      "  -cluster                   join a Vert.x cluster (with -Dvertx.hazelcast.config=conf/cluster.xml)",
      "  -options JSON              Vert.x options, e.g. '{\"haEnabled\":true}'",
      "  -deployment-options JSON   deployment options, e.g. '{\"ha\":true}'",
      "  CLASS                      as the first argument: deploy that verticle instead of frame-echo",
      "",
      "Environment:",
      "  FRAME_ECHO_<KEY>           any setting, the key in upper snake case: FRAME_ECHO_PORT=5555,",
      "                             FRAME_ECHO_MAX_FRAME_SIZE=1024, ... (over the -conf file, under inline -conf JSON)",
      "  FRAME_ECHO_METRICS_ENABLED=true   Prometheus /metrics and /health/live, /health/ready on "
        + MetricsOptions.DEFAULT_HOST + ":" + MetricsOptions.DEFAULT_PORT,
      "                             (FRAME_ECHO_METRICS_HOST=0.0.0.0 to reach them from other machines)",
      "  FRAME_ECHO_LOG_LEVEL       " + String.join(", ", LogSettings.LEVELS) + " (default INFO)",
      "  FRAME_ECHO_LOG_FORMAT      " + String.join(", ", LogSettings.FORMATS) + " (default text)",
      "  FRAME_ECHO_DEBUG=1         add the stack trace to an error line",
      "",
      "Exit status: 0 ok, 1 invalid configuration, 2 usage error, 11 Vert.x could not start,",
      "15 the server could not start (port in use, ...), 143 stopped by SIGTERM after the graceful shutdown;",
      "client and bench: 0 ok, 1 failed, 2 bad option.",
      "",
      "More: every Vert.x launcher option with --launcher-help; client --help; bench --help; src/docs/OPERATING.md.",
      "");
  }
}
