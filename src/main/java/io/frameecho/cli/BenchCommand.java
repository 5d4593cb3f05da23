package io.frameecho.cli;

import io.frameecho.bench.BenchResult;
import io.frameecho.bench.BenchSettings;
import io.frameecho.bench.HtmlReport;
import io.frameecho.bench.LoadGenerator;
import io.frameecho.bench.SizeRange;
import io.vertx.core.json.JsonObject;
import picocli.CommandLine;
import picocli.CommandLine.Command;
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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code bench}: loads any server that speaks the frame protocol and reports what it measured. */
@Command(name = "bench", mixinStandardHelpOptions = true, versionProvider = Versions.Provider.class, sortOptions = false,
  description = {"Load generator for the frame protocol: requests/s, MB/s and latency percentiles (HdrHistogram).",
    "Closed loop by default (--pipeline requests in flight per connection); open loop with --rate, where latency",
    "counts from each request's intended send time so queueing is not hidden.",
    "Given JSON result files instead, with --report, draws them on one chart without running anything.",
    "Exit status: 0 ok, 1 connection failures, errors or mismatches, 2 bad options."})
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

  @Option(names = {"-w", "--warmup"}, paramLabel = "SECONDS", description = "seconds at the start left out of the figures (default: 2, or 0 with --requests)")
  Double warmup;

  @Option(names = {"-r", "--rate"}, description = "open loop: total requests per second, on a fixed schedule")
  double rate;

  @Option(names = "--verify", description = "check every echoed byte; payloads differ per request, so reordering is caught")
  boolean verify;

  @Option(names = {"-t", "--threads"}, description = "event loops of the load generator (default: available cores)")
  Integer threads;

  @Option(names = "--idle", description = "open the connections and send nothing for --duration (server memory per connection)")
  boolean idle;

  @Option(names = {"-q", "--quiet"}, description = "no progress lines (they are off anyway when output is not a terminal)")
  boolean quiet;

  @Option(names = "--label", description = "name of this run in reports")
  String label;

  @Option(names = "--json", paramLabel = "FILE", description = "write the results as one JSON document")
  Path json;

  @Option(names = "--hgrm", paramLabel = "FILE", description = "write the HdrHistogram percentile distribution (microseconds)")
  Path hgrm;

  @Option(names = "--report", paramLabel = "FILE.html", description = "write a self-contained HTML page with the latency chart")
  Path report;

  @Parameters(paramLabel = "RESULT.json", arity = "0..*", description = "earlier --json results to draw with --report (nothing is run)")
  List<Path> inputs = new ArrayList<>();

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
      double warmupSeconds = warmup != null ? warmup : requests != null ? 0 : 2;
      return new BenchSettings(host, port, connections, pipeline, SizeRange.parse(size),
        duration == null ? 10 : duration, requestCount, warmupSeconds, verify, rate,
        threads == null ? Runtime.getRuntime().availableProcessors() : threads, idle, label);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
  }

  @Override
  public Integer call() throws Exception {
    if (!inputs.isEmpty()) {
      return reportOnly();
    }
    BenchSettings settings = settings();
    boolean showProgress = !quiet && System.console() != null;
    BenchResult result = new LoadGenerator(settings).run(showProgress ? err : null);
    result.print(out);
    JsonObject document = result.toJson();
    if (json != null) {
      Files.writeString(json, document.encodePrettily() + "\n", StandardCharsets.UTF_8);
    }
    if (hgrm != null) {
      try (PrintStream file = new PrintStream(Files.newOutputStream(hgrm), true, StandardCharsets.UTF_8)) {
        result.printPercentileDistribution(file);
      }
    }
    if (report != null) {
      Files.writeString(report, HtmlReport.render("frame-echo bench: " + settings.describe(), List.of(document)), StandardCharsets.UTF_8);
    }
    return result.failed() ? 1 : 0;
  }

  private int reportOnly() throws IOException {
    if (report == null) {
      throw new ParameterException(spec.commandLine(), "result files were given: say where the chart goes with --report FILE.html");
    }
    List<JsonObject> results = new ArrayList<>();
    for (Path input : inputs) {
      try {
        results.add(new JsonObject(Files.readString(input, StandardCharsets.UTF_8)));
      } catch (IOException | io.vertx.core.json.DecodeException e) {
        throw new ParameterException(spec.commandLine(), "cannot read " + input + " as a bench JSON result: " + e.getMessage());
      }
    }
    Files.writeString(report, HtmlReport.render("frame-echo bench comparison", results), StandardCharsets.UTF_8);
    out.println("wrote " + report + " (" + results.size() + " runs)");
    return 0;
  }
}
