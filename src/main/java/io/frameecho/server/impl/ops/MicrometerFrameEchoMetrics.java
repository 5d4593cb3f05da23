package io.frameecho.server.impl.ops;

import io.frameecho.server.CloseReason;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.HandshakeFailure;
import io.frameecho.server.Rejection;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.vertx.micrometer.backends.BackendRegistries;
import io.vertx.core.shareddata.Shareable;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * frame-echo's own meters, named {@code frame_echo_*} in Prometheus; one set per Vert.x instance. With
 * {@link PrometheusRegistry}, the only code that touches Micrometer (an optional dependency), loaded only
 * when metrics are enabled.
 */
final class MicrometerFrameEchoMetrics implements FrameEchoMetrics, Shareable {

  private static final String VERTX_REGISTRIES = "io.vertx.micrometer.backends.BackendRegistries";

  private final MeterRegistry registry;
  private final boolean prometheusPresent = present(PrometheusRegistry.CLASS_NAME);
  private final Counter requests;
  private final Counter responses;
  private final DistributionSummary frameSizes;
  private final Counter protocolErrors;
  private final Timer latency;
  private final Map<Rejection, Counter> rejected = new EnumMap<>(Rejection.class);
  private final Map<CloseReason, Counter> closed = new EnumMap<>(CloseReason.class);
  private final Map<HandshakeFailure, Counter> handshakesFailed = new EnumMap<>(HandshakeFailure.class);
  private final AtomicInteger paused = new AtomicInteger();

  /**
   * Meters in the application's registry when Vert.x was started with Micrometer metrics
   * ({@code vertx-micrometer-metrics}), or else in a Prometheus registry of their own.
   */
  static MicrometerFrameEchoMetrics create(Operations operations) {
    MeterRegistry registry = present(VERTX_REGISTRIES) ? BackendRegistries.getDefaultNow() : null;
    if (registry == null) {
      if (!present(PrometheusRegistry.CLASS_NAME)) {
        throw new IllegalStateException("metrics.enabled: needs Vert.x started with Micrometer metrics "
          + "(io.vertx:vertx-micrometer-metrics) or io.micrometer:micrometer-registry-prometheus on the class path");
      }
      registry = PrometheusRegistry.create();
    }
    return new MicrometerFrameEchoMetrics(registry, operations);
  }

  private static boolean present(String className) {
    try {
      Class.forName(className, false, MicrometerFrameEchoMetrics.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  private MicrometerFrameEchoMetrics(MeterRegistry registry, Operations operations) {
    this.registry = registry;
    requests = Counter.builder("frame.echo.requests").description("Request frames received").register(registry);
    responses = Counter.builder("frame.echo.responses").description("Response frames queued for writing").register(registry);
    frameSizes = DistributionSummary.builder("frame.echo.frame.size").baseUnit("bytes")
      .description("Payload sizes of request frames")
      .serviceLevelObjectives(16, 256, 4096, 65536, 1 << 20, 16 << 20, 32 << 20)
      .register(registry);
    protocolErrors = Counter.builder("frame.echo.protocol.errors").description("Connections ended by an oversized header").register(registry);
    latency = Timer.builder("frame.echo.request.latency")
      .description("Time from a request frame complete to its response queued, inside the server")
      .serviceLevelObjectives(Duration.ofNanos(10_000), Duration.ofNanos(100_000), Duration.ofMillis(1), Duration.ofMillis(10),
        Duration.ofMillis(100), Duration.ofSeconds(1), Duration.ofSeconds(10))
      .register(registry);
    for (Rejection why : Rejection.values()) {
      rejected.put(why, Counter.builder("frame.echo.connections.rejected").tag("limit", why.key())
        .description("Connections turned away by a limit").register(registry));
    }
    for (CloseReason reason : CloseReason.values()) {
      closed.put(reason, Counter.builder("frame.echo.connections.closed").tag("reason", reason.name().toLowerCase(Locale.ROOT))
        .description("Connections ended, by reason (timeouts included)").register(registry));
    }
    for (HandshakeFailure why : HandshakeFailure.values()) {
      handshakesFailed.put(why, Counter.builder("frame.echo.tls.handshakes.failed").tag("cause", why.tag())
        .description("TLS handshakes that did not complete, by cause (timeout, not_tls, failed)").register(registry));
    }
    Gauge.builder("frame.echo.connections.paused", paused, AtomicInteger::get)
      .description("Connections not reading because of back-pressure").register(registry);
    Gauge.builder("frame.echo.connections.budget.waiting", operations, Operations::budgetWaiting)
      .description("Connections not reading until the buffer budget (maxBufferedBytes) has room").register(registry);
    Gauge.builder("frame.echo.connections.open", operations, Operations::openConnections)
      .description("Connections open").register(registry);
    Gauge.builder("frame.echo.buffered", operations, Operations::bufferedBytes).baseUnit("bytes")
      .description("Bytes held in frames being read and responses being written (maxBufferedBytes budget)").register(registry);
  }

  @Override
  public long requestReceived(int payloadBytes) {
    requests.increment();
    frameSizes.record(payloadBytes);
    return System.nanoTime();
  }

  @Override
  public void responseQueued(long receivedNanos) {
    responses.increment();
    latency.record(System.nanoTime() - receivedNanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void protocolError() {
    protocolErrors.increment();
  }

  @Override
  public void connectionRejected(Rejection why) {
    rejected.get(why).increment();
  }

  @Override
  public void handshakeFailed(HandshakeFailure why) {
    handshakesFailed.get(why).increment();
  }

  @Override
  public void connectionClosed(CloseReason reason) {
    closed.get(reason).increment();
  }

  @Override
  public void readingPaused() {
    paused.incrementAndGet();
  }

  @Override
  public void readingResumed() {
    paused.decrementAndGet();
  }

  /** The Prometheus text exposition of the registry these meters are in, or null when it is not a Prometheus one. */
  String scrape() {
    return prometheusPresent ? PrometheusRegistry.scrape(registry) : null;
  }
}
