package io.frameecho.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

import java.io.PrintStream;
import java.util.Locale;

/**
 * The figures of one run, measured after the warm-up: throughput, payload bandwidth, latency
 * distribution (nanoseconds in the histogram, microseconds in every report), failures, and the load
 * generator's own CPU time.
 */
public record BenchResult(BenchSettings settings, long requests, double elapsedSeconds, long bytesSent,
                          long bytesReceived, long errors, long mismatches, long connectionFailures,
                          long serverCloses, long unanswered,
                          Histogram latencyNanos, double clientCpuSeconds, String firstError) {

  public double requestsPerSecond() {
    return elapsedSeconds > 0 ? requests / elapsedSeconds : 0;
  }

  public double sentMBps() {
    return elapsedSeconds > 0 ? bytesSent / elapsedSeconds / 1e6 : 0;
  }

  public double receivedMBps() {
    return elapsedSeconds > 0 ? bytesReceived / elapsedSeconds / 1e6 : 0;
  }

  /** Latency at {@code percentile} (0-100), in microseconds. */
  public double latencyMicros(double percentile) {
    return latencyNanos.getTotalCount() == 0 ? 0 : latencyNanos.getValueAtPercentile(percentile) / 1000.0;
  }

  public double maxLatencyMicros() {
    return latencyNanos.getTotalCount() == 0 ? 0 : latencyNanos.getMaxValue() / 1000.0;
  }

  /** Load generator CPU time per completed request, in microseconds. */
  public double clientCpuMicrosPerRequest() {
    return requests > 0 ? clientCpuSeconds * 1e6 / requests : 0;
  }

  /**
   * True when the run should make the command fail: connections refused, wrong echoes, connections dropped
   * or reset. A clean close by the server (a FIN after whole responses) is reported, not a failure.
   */
  public boolean failed() {
    return connectionFailures > 0 || mismatches > 0 || errors > 0;
  }

  public JsonObject toJson() {
    JsonObject latency = new JsonObject()
      .put("p50", round(latencyMicros(50)))
      .put("p90", round(latencyMicros(90)))
      .put("p99", round(latencyMicros(99)))
      .put("p999", round(latencyMicros(99.9)))
      .put("max", round(maxLatencyMicros()))
      .put("mean", round(latencyNanos.getTotalCount() == 0 ? 0 : latencyNanos.getMean() / 1000.0));
    JsonArray percentiles = new JsonArray();
    if (latencyNanos.getTotalCount() > 0) {
      for (HistogramIterationValue v : latencyNanos.percentiles(5)) {
        percentiles.add(new JsonArray().add(round(v.getPercentileLevelIteratedTo())).add(round(v.getValueIteratedTo() / 1000.0)));
      }
    }
    return new JsonObject()
      .put("label", settings.describe())
      .put("host", settings.host())
      .put("port", settings.port())
      .put("unixSocket", settings.unixSocket())
      .put("connections", settings.connections())
      .put("pipeline", settings.pipeline())
      .put("sizeMin", settings.size().min())
      .put("sizeMax", settings.size().max())
      .put("rate", settings.rate())
      .put("verify", settings.verify())
      .put("churn", settings.churn())
      .put("warmupSeconds", settings.warmupSeconds())
      .put("elapsedSeconds", round(elapsedSeconds))
      .put("requests", requests)
      .put("requestsPerSecond", round(requestsPerSecond()))
      .put("connectionsPerSecond", settings.churn() ? round(requestsPerSecond()) : null)
      .put("sentMBps", round(sentMBps()))
      .put("receivedMBps", round(receivedMBps()))
      .put("errors", errors)
      .put("mismatches", mismatches)
      .put("connectionFailures", connectionFailures)
      .put("serverCloses", serverCloses)
      .put("unanswered", unanswered)
      .put("latencyMicros", latency)
      .put("clientCpuSeconds", round(clientCpuSeconds))
      .put("clientCpuMicrosPerRequest", round(clientCpuMicrosPerRequest()))
      .put("clientThreads", settings.threads())
      .put("clientTransport", LoadGenerator.transport())
      .put("firstError", firstError)
      .put("percentiles", percentiles);
  }

  /** The human-readable report. */
  public void print(PrintStream out) {
    if (settings.churn()) {
      out.printf(Locale.ROOT, "target:          %s, %d clients, each a connection per request, size %s%n", settings.target(),
        settings.connections(), settings.size());
    } else {
      out.printf(Locale.ROOT, "target:          %s, %d connections, pipeline %d, size %s%s%n", settings.target(),
        settings.connections(), settings.pipeline(), settings.size(), settings.rate() > 0 ? String.format(Locale.ROOT, ", rate %.0f/s", settings.rate()) : "");
    }
    out.printf(Locale.ROOT, "measured:        %.2f s after %.1f s of warm-up%s%n", elapsedSeconds, settings.warmupSeconds(),
      settings.verify() ? ", every byte verified" : "");
    if (settings.churn()) {
      out.printf(Locale.ROOT, "connections:     %d (%.1f connections/s), each one request echoed%n", requests, requestsPerSecond());
    } else {
      out.printf(Locale.ROOT, "requests:        %d (%.1f requests/s)%n", requests, requestsPerSecond());
    }
    out.printf(Locale.ROOT, "payload:         %.2f MB/s sent, %.2f MB/s received%n", sentMBps(), receivedMBps());
    out.printf(Locale.ROOT, "%s p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f%n",
      settings.churn() ? "connect to echo (us):" : "latency (us):   ", latencyMicros(50), latencyMicros(90), latencyMicros(99), latencyMicros(99.9), maxLatencyMicros());
    out.printf(Locale.ROOT, "failures:        %d connection failures, %d errors, %d mismatches%n", connectionFailures, errors, mismatches);
    if (serverCloses > 0) {
      out.printf(Locale.ROOT, "closed by server: %d connections ended cleanly (a FIN after whole responses), %d requests unanswered%n",
        serverCloses, unanswered);
    }
    if (firstError != null) {
      out.printf(Locale.ROOT, "first error:     %s%n", firstError);
    }
    out.printf(Locale.ROOT, "load generator:  %.2f s CPU on %d %s event loops (%.0f%% of one core), %.2f us CPU per %s%n",
      clientCpuSeconds, settings.threads(), LoadGenerator.transport(), elapsedSeconds > 0 ? 100 * clientCpuSeconds / elapsedSeconds : 0,
      clientCpuMicrosPerRequest(), settings.churn() ? "connection" : "request");
  }

  /** The standard HdrHistogram percentile distribution, in microseconds. */
  public void printPercentileDistribution(PrintStream out) {
    latencyNanos.outputPercentileDistribution(out, 5, 1000.0);
  }

  private static double round(double value) {
    return Math.round(value * 1000) / 1000.0;
  }
}
