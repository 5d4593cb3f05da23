package io.frameecho.bench;

import io.frameecho.protocol.LengthField;

/**
 * What one benchmark run does. The constructor checks every value and says which option is wrong.
 *
 * @param requests total requests to complete, or 0 to run for {@code durationSeconds}
 * @param rate total requests per second across all connections (open loop), or 0 for closed loop
 * @param idle open the connections and send nothing (to measure a server's memory per connection)
 * @param unixSocket connect to this unix domain socket instead of {@code host} and {@code port}, or null
 * @param churn a connection per request: each of {@code connections} clients connects, sends one frame, reads
 *     its echo, closes, and again ({@code requests} then counts connections)
 */
public record BenchSettings(String host, int port, int connections, int pipeline, SizeRange size,
                            double durationSeconds, long requests, double warmupSeconds, boolean verify,
                            double rate, int threads, boolean idle, String label, String unixSocket,
                            boolean churn, LengthField framing) {

  /** Settings for frame-echo's own framing. */
  public BenchSettings(String host, int port, int connections, int pipeline, SizeRange size, double durationSeconds,
                       long requests, double warmupSeconds, boolean verify, double rate, int threads, boolean idle,
                       String label, String unixSocket, boolean churn) {
    this(host, port, connections, pipeline, size, durationSeconds, requests, warmupSeconds, verify, rate, threads, idle,
      label, unixSocket, churn, LengthField.DEFAULT);
  }

  public BenchSettings {
    require(framing != null, "--framing is required");
    require(host != null && !host.isBlank(), "--host must not be empty");
    require(port >= 1 && port <= 65535, "--port must be between 1 and 65535, not " + port);
    require(connections >= 1, "--connections must be at least 1, not " + connections);
    require(pipeline >= 1, "--pipeline must be at least 1, not " + pipeline);
    require(size != null, "--size is required");
    require(durationSeconds > 0, "--duration must be positive, not " + durationSeconds);
    require(requests >= 0, "--requests must be positive");
    require(warmupSeconds >= 0, "--warmup cannot be negative");
    require(requests > 0 || warmupSeconds < durationSeconds,
      "--warmup (" + warmupSeconds + " s) must be shorter than --duration (" + durationSeconds + " s)");
    require(rate >= 0, "--rate must be positive");
    require(rate == 0 || rate <= 1e9, "--rate is too high: " + rate);
    require(threads >= 1, "--threads must be at least 1, not " + threads);
    require(unixSocket == null || !unixSocket.isEmpty(), "--unix-socket needs a path");
    require(!(idle && (rate > 0 || requests > 0 || verify)), "--idle sends nothing: it excludes --rate, --requests and --verify");
    require(!(churn && (idle || rate > 0 || pipeline > 1)),
      "--churn sends one frame per connection: it excludes --idle, --rate and --pipeline above 1");
  }

  private static void require(boolean condition, String message) {
    if (!condition) {
      throw new IllegalArgumentException(message);
    }
  }

  /** Where the load goes: {@code host:port}, or {@code unix:PATH}. */
  public String target() {
    return unixSocket != null ? "unix:" + unixSocket : host + ":" + port;
  }

  /** A short description for reports: where, how many connections, how deep, how big. */
  public String describe() {
    if (label != null && !label.isBlank()) {
      return label;
    }
    if (churn) {
      return target() + " churn c=" + connections + " " + size;
    }
    return target() + " c=" + connections + " p=" + pipeline + " " + size + (rate > 0 ? " rate=" + (long) rate + "/s" : "");
  }
}
