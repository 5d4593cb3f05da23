package io.frameecho.cli;

import io.frameecho.bench.BenchResult;
import io.frameecho.bench.BenchSettings;
import io.frameecho.bench.BenchTls;
import io.frameecho.bench.HtmlReport;
import io.frameecho.bench.LoadGenerator;
import io.frameecho.bench.SizeRange;
import io.vertx.core.json.JsonObject;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/** {@code bench}: loads any server that speaks the frame protocol and reports what it measured. */
@Command(name = "bench", mixinStandardHelpOptions = true, versionProvider = Versions.Provider.class, sortOptions = false,
  description = {"Load generator for the frame protocol: requests/s, MB/s and latency percentiles (HdrHistogram).",
    "Closed loop by default (--pipeline requests in flight per connection); open loop with --rate, where latency",
    "counts from each request's intended send time so queueing is not hidden; with --churn, a connection per request.",
    "Given JSON result files instead, with --report, draws them on one chart without running anything.",
    "Exit status: 0 ok, 1 connection failures, errors or mismatches, 2 bad options (found before anything runs)."})
final class BenchCommand implements Callable<Integer> {

  @Spec
  CommandSpec spec;

  @Option(names = {"-H", "--host"}, defaultValue = "127.0.0.1", description = "server host (default: ${DEFAULT-VALUE})")
  String host;

  @Option(names = {"-p", "--port"}, defaultValue = "1234", description = "server port (default: ${DEFAULT-VALUE})")
  int port;

  @Option(names = {"-c", "--connections"}, defaultValue = "50", description = "connections (default: ${DEFAULT-VALUE})")
  int connections;

  @Option(names = {"-P", "--pipeline"}, defaultValue = "1", description = "requests in flight per connection (default: ${DEFAULT-VALUE})")
  int pipeline;

  @Option(names = {"-s", "--size"}, defaultValue = "16", paramLabel = "SIZE|MIN-MAX",
    description = "payload bytes, fixed or a random range; suffixes KiB, MiB (default: ${DEFAULT-VALUE})")
  String size;

  @Option(names = {"-d", "--duration"}, paramLabel = "SECONDS", description = "how long to send, warm-up included (default: 10)")
  Double duration;

  @Option(names = {"-n", "--requests"}, description = "send this many requests instead of running for a duration")
  Long requests;

  @Option(names = {"-w", "--warmup"}, paramLabel = "SECONDS",
    description = "seconds at the start left out of the figures (default: a fifth of --duration, at most 2; 0 with --requests)")
  Double warmup;

  @Option(names = {"-r", "--rate"}, description = "open loop: total requests per second, on a fixed schedule")
  double rate;

  @Option(names = "--verify", description = "check every echoed byte; payloads differ per request, so reordering is caught")
  boolean verify;

  @Option(names = {"-t", "--threads"}, description = "event loops of the load generator (default: available cores)")
  Integer threads;

  @Option(names = "--idle", description = "open the connections and send nothing for --duration (server memory per connection)")
  boolean idle;

  @Option(names = "--churn", description = {"a connection per request: each of --connections clients connects, sends one frame,",
    "reads its echo, closes, and again; connections/s, and latency from the connect to the echo's last byte"})
  boolean churn;

  @Option(names = {"-q", "--quiet"}, description = "no progress lines (they are off anyway when output is not a terminal)")
  boolean quiet;

  @Option(names = "--label", description = "name of this run in reports")
  String label;

  @Mixin
  FramingOption framing = new FramingOption();

  @Mixin
  UnixSocketOption unixSocket = new UnixSocketOption();

  @Mixin
  TlsClientOptions tlsOptions = new TlsClientOptions();

  @Option(names = "--json", paramLabel = "FILE", description = "write the results as one JSON document ('-': to stdout, the text report then goes to stderr)")
  Path json;

  @Option(names = "--hgrm", paramLabel = "FILE", description = "write the HdrHistogram percentile distribution (microseconds)")
  Path hgrm;

  @Option(names = "--report", paramLabel = "FILE.html", description = "write a self-contained HTML page with the latency chart")
  Path report;

  @Parameters(paramLabel = "RESULT.json", arity = "0..*", description = "earlier --json results to draw with --report (nothing is run)")
  List<Path> inputs = new ArrayList<>();

  /** Below this share of --rate, the run says the rate was not reached. */
  private static final double RATE_REACHED = 0.95;

  private final PrintStream out;
  private final PrintStream err;

  BenchCommand(PrintStream out, PrintStream err) {
    this.out = out;
    this.err = err;
  }

  static CommandLine commandLine(PrintStream out, PrintStream err) {
    return new CommandLine(new BenchCommand(out, err))
      .setOut(new PrintWriter(out, true))
      .setErr(new PrintWriter(err, true))
      .setParameterExceptionHandler(Main.oneLineUsageErrors("bench"))
      .setExecutionExceptionHandler(Main.oneLineFailures("bench"));
  }

  /** Builds the run's settings from the options, or fails with the option at fault. */
  BenchSettings settings() {
    if (duration != null && requests != null) {
      throw new ParameterException(spec.commandLine(), "--duration and --requests exclude each other");
    }
    try {
      long requestCount = requests == null ? 0 : requests;
      if (requests != null && requests <= 0) {
        throw new IllegalArgumentException("--requests must be positive, not " + requests);
      }
      double durationSeconds = duration == null ? DEFAULT_DURATION_SECONDS : duration;
      double warmupSeconds = warmup != null ? warmup : requests != null ? 0 : defaultWarmup(durationSeconds);
      return new BenchSettings(host, port, connections, pipeline, SizeRange.parse(size),
        durationSeconds, requestCount, warmupSeconds, verify, rate,
        threads == null ? Runtime.getRuntime().availableProcessors() : threads, idle, label, unixSocket.check(spec, tlsOptions.tls),
        churn, framing.form(spec));
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
  }

  static final double DEFAULT_DURATION_SECONDS = 10;

  /** A fifth of the run, at most 2 s: a 10 s run warms up for 2 s, a 1 s run for 0.2 s. */
  static double defaultWarmup(double durationSeconds) {
    return Math.min(2, durationSeconds / 5);
  }

  /** TLS settings from the options, or null for plain TCP; the trusted file is checked here. */
  BenchTls tlsSettings() {
    tlsOptions.check(spec);
    if (!tlsOptions.tls) {
      return null;
    }
    BenchTls settings = new BenchTls(tlsOptions.trust, tlsOptions.cert, tlsOptions.key, !tlsOptions.noVerifyHost);
    try {
      settings.context();
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
    return settings;
  }

  /** Fails, before anything runs, when an output file could not be written. */
  void checkOutputs() {
    checkWritable("--json", json);
    checkWritable("--hgrm", hgrm);
    checkWritable("--report", report);
  }

  private void checkWritable(String option, Path file) {
    if (file == null || (option.equals("--json") && isStdout(file))) {
      return;
    }
    String problem = unwritable(file);
    if (problem != null) {
      throw new ParameterException(spec.commandLine(), option + " " + file + ": " + problem);
    }
  }

  /** Why {@code file} cannot be written, or null when it can (created or replaced). */
  static String unwritable(Path file) {
    Path absolute = file.toAbsolutePath();
    Path parent = absolute.getParent();
    if (Files.isDirectory(absolute)) {
      return "is a directory";
    }
    if (parent == null || !Files.isDirectory(parent)) {
      return "the directory " + parent + " does not exist";
    }
    if (Files.exists(absolute) ? !Files.isWritable(absolute) : !Files.isWritable(parent)) {
      return "not writable";
    }
    return null;
  }

  private static boolean isStdout(Path file) {
    return file.toString().equals("-");
  }

  @Override
  public Integer call() throws Exception {
    if (!inputs.isEmpty()) {
      return reportOnly();
    }
    BenchSettings settings = settings();
    BenchTls tlsSettings = tlsSettings();
    checkOutputs();
    boolean jsonToStdout = json != null && isStdout(json);
    boolean showProgress = !quiet && System.console() != null;
    Instant started = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    BenchResult result = new LoadGenerator(settings, tlsSettings).run(showProgress ? err : null);
    result.print(jsonToStdout ? err : out);
    // Two requests of slack: at a low rate, the edges of the measured window alone can lose one.
    if (settings.rate() > 0 && result.requests() + 2 < RATE_REACHED * settings.rate() * result.elapsedSeconds()) {
      err.printf(Locale.ROOT, "warning: --rate %.0f/s was not reached: %.0f requests/s (held back by the server, the load generator"
        + " (see its CPU above), or --pipeline %d, the most requests that may queue on one connection)%n",
        settings.rate(), result.requestsPerSecond(), settings.pipeline());
    }
    JsonObject document = result.toJson()
      .put("tls", tlsOptions.tls)
      .put("date", started.toString())
      .put("frameEchoVersion", Versions.frameEcho())
      .put("commandLine", commandLine());
    if (jsonToStdout) {
      out.println(document.encodePrettily());
    } else if (json != null) {
      Files.writeString(json, document.encodePrettily() + "\n", StandardCharsets.UTF_8);
    }
    if (hgrm != null) {
      try (PrintStream file = new PrintStream(Files.newOutputStream(hgrm), true, StandardCharsets.UTF_8)) {
        result.printPercentileDistribution(file);
      }
    }
    if (report != null) {
      Files.writeString(report, HtmlReport.render("frame-echo bench: " + settings.describe(), List.of(document), generatedBy()),
        StandardCharsets.UTF_8);
    }
    return result.failed() ? 1 : 0;
  }

  private int reportOnly() throws IOException {
    if (report == null) {
      throw new ParameterException(spec.commandLine(), "result files were given: say where the chart goes with --report FILE.html");
    }
    checkWritable("--report", report);
    List<JsonObject> results = new ArrayList<>();
    for (Path input : inputs) {
      try {
        results.add(new JsonObject(Files.readString(input, StandardCharsets.UTF_8)));
      } catch (IOException | io.vertx.core.json.DecodeException e) {
        throw new ParameterException(spec.commandLine(), "cannot read " + input + " as a bench JSON result: " + e.getMessage());
      }
    }
    Files.writeString(report, HtmlReport.render("frame-echo bench comparison", results, generatedBy()), StandardCharsets.UTF_8);
    out.println("wrote " + report + " (" + results.size() + " runs)");
    return 0;
  }

  /** The page's footer: when, which version, and this command. */
  private String generatedBy() {
    return "Generated " + Instant.now().truncatedTo(ChronoUnit.SECONDS) + " by frame-echo " + Versions.frameEcho() + ": " + commandLine();
  }

  /** This invocation, as a shell command. */
  String commandLine() {
    List<String> words = new ArrayList<>(List.of("java", "-jar", "frame-echo.jar", "bench"));
    if (spec != null && spec.commandLine().getParseResult() != null) {
      for (String arg : spec.commandLine().getParseResult().originalArgs()) {
        words.add(arg.matches("[A-Za-z0-9_./:=,+@%-]+") ? arg : "'" + arg.replace("'", "'\\''") + "'");
      }
    }
    return String.join(" ", words);
  }
}
