package io.frameecho.server.impl.ops;

import io.frameecho.server.CloseReason;
import io.frameecho.server.EventBusFailure;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.HandshakeFailure;
import io.frameecho.server.Rejection;
import io.frameecho.server.RequestLoss;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.frameecho.server.impl.shared.ConnectionLimits;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One server tag's {@code frame_echo_*} meters, created once per registry and tag by {@link MeterRegistries} so that
 * servers sharing a tag count together and no gauge is registered twice. Touches the optional Micrometer dependency.
 */
final class MicrometerFrameEchoMetrics implements FrameEchoMetrics {

  private final Counter requests;
  private final Counter responses;
  private final DistributionSummary frameSizes;
  private final Counter protocolErrors;
  private final Timer latency;
  private final Map<Rejection, Counter> rejected = new EnumMap<>(Rejection.class);
  private final Map<CloseReason, Counter> closed = new EnumMap<>(CloseReason.class);
  private final Map<HandshakeFailure, Counter> handshakesFailed = new EnumMap<>(HandshakeFailure.class);
  private final Map<RequestLoss, Counter> lost = new EnumMap<>(RequestLoss.class);
  private final AtomicInteger paused = new AtomicInteger();
  private final Map<EventBusFailure, Counter> eventBusFailed = new EnumMap<>(EventBusFailure.class);
  private final Counter eventBusResent;
  private final AtomicLong eventBusHeld = new AtomicLong();
  /** 1 while the event-bus address has a consumer, 0 when none was found, -1 before the first look. */
  private final AtomicInteger eventBusConsumer = new AtomicInteger(-1);
  /** The tagged servers' limits, summed by the gauges. */
  private final Set<ConnectionLimits> limits = ConcurrentHashMap.newKeySet();
  private final Tags tags;
  private final MeterRegistry registry;

  MicrometerFrameEchoMetrics(MeterRegistry registry, String server) {
    this.registry = registry;
    tags = Tags.of("server", server);
    requests = Counter.builder("frame.echo.requests").tags(tags).description("Request frames received").register(registry);
    responses = Counter.builder("frame.echo.responses").tags(tags).description("Response frames queued for writing").register(registry);
    frameSizes = DistributionSummary.builder("frame.echo.frame.size").tags(tags).baseUnit("bytes")
      .description("Payload sizes of request frames")
      .serviceLevelObjectives(16, 256, 4096, 65536, 1 << 20, 16 << 20, 32 << 20)
      .register(registry);
    protocolErrors = Counter.builder("frame.echo.protocol.errors").tags(tags).description("Connections ended by an oversized header").register(registry);
    latency = Timer.builder("frame.echo.request.latency").tags(tags)
      .description("Time from a request frame complete to its response queued, inside the server")
      .serviceLevelObjectives(Duration.ofNanos(10_000), Duration.ofNanos(100_000), Duration.ofMillis(1), Duration.ofMillis(10),
        Duration.ofMillis(100), Duration.ofSeconds(1), Duration.ofSeconds(10))
      .register(registry);
    for (Rejection why : Rejection.values()) {
      rejected.put(why, Counter.builder("frame.echo.connections.rejected").tags(tags).tag("limit", why.key())
        .description("Connections turned away by a limit").register(registry));
    }
    for (CloseReason reason : CloseReason.values()) {
      closed.put(reason, Counter.builder("frame.echo.connections.closed").tags(tags).tag("reason", reason.name().toLowerCase(Locale.ROOT))
        .description("Connections ended, by reason (timeouts included)").register(registry));
    }
    for (HandshakeFailure why : HandshakeFailure.values()) {
      boolean proxy = why.name().startsWith("PROXY");
      handshakesFailed.put(why, Counter.builder(proxy ? "frame.echo.proxy.headers.failed" : "frame.echo.tls.handshakes.failed")
        .tags(tags).tag("cause", why.tag())
        .description(proxy ? "Connections closed before or for their PROXY protocol header, by cause (proxy_invalid, "
          + "proxy_timeout, proxy_untrusted)" : "TLS handshakes that did not complete, by cause (timeout, not_tls, failed)")
        .register(registry));
    }
    for (EventBusFailure why : EventBusFailure.values()) {
      eventBusFailed.put(why, Counter.builder("frame.echo.eventbus.answers.failed").tags(tags).tag("cause", why.tag())
        .description("Answers the event-bus handler failed, by cause (each ends its connection)").register(registry));
    }
    eventBusResent = Counter.builder("frame.echo.eventbus.resent").tags(tags)
      .description("Requests the event-bus handler sent again (handler.resendAfterMs)").register(registry);
    Gauge.builder("frame.echo.eventbus.held", eventBusHeld, AtomicLong::get).tags(tags).baseUnit("bytes")
      .description("Bytes of requests Vert.x may still hold after their answer (re-sent copies, timed-out ones), "
        + "counted in the buffer budget").register(registry);
    Gauge.builder("frame.echo.eventbus.consumer", eventBusConsumer, AtomicInteger::get).tags(tags)
      .description("1 while the event-bus address has a consumer, 0 when none was found, -1 before the first look")
      .register(registry);
    for (RequestLoss how : RequestLoss.values()) {
      lost.put(how, Counter.builder("frame.echo.connections.requests.lost").tags(tags).tag("cause", how.tag())
        .description("Connections that lost at least one request their client sent, by cause (after_close, cut)").register(registry));
    }
    Gauge.builder("frame.echo.connections.paused", paused, AtomicInteger::get).tags(tags)
      .description("Connections not reading because of back-pressure").register(registry);
    Gauge.builder("frame.echo.connections.budget.waiting", this, m -> m.sum(l -> l.budget().waiting())).tags(tags)
      .description("Connections not reading until the buffer budget (maxBufferedBytes) has room").register(registry);
    Gauge.builder("frame.echo.connections.open", this, m -> m.sum(ConnectionLimits::openConnections)).tags(tags)
      .description("Connections open").register(registry);
    Gauge.builder("frame.echo.connections.max", this, m -> m.sum(ConnectionLimits::maxConnections)).tags(tags)
      .description("The configured maxConnections (0: no limit)").register(registry);
    Gauge.builder("frame.echo.buffered", this, m -> m.sum(l -> l.budget().used())).tags(tags).baseUnit("bytes")
      .description("Bytes held in frames being read and responses being written (maxBufferedBytes budget)").register(registry);
    Gauge.builder("frame.echo.buffered.max", this, m -> m.sum(l -> l.budget().limit())).tags(tags).baseUnit("bytes")
      .description("The buffer budget in effect (maxBufferedBytes)").register(registry);
  }

  /** Adds a server's limits to the gauges; balanced by {@link #remove}. */
  void add(ConnectionLimits server) {
    limits.add(server);
  }

  void remove(ConnectionLimits server) {
    limits.remove(server);
  }

  private double sum(java.util.function.ToDoubleFunction<ConnectionLimits> value) {
    return limits.stream().mapToDouble(value).sum();
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
  public void requestLost(RequestLoss how) {
    lost.get(how).increment();
  }

  @Override
  public void readingPaused() {
    paused.incrementAndGet();
  }

  @Override
  public void readingResumed() {
    paused.decrementAndGet();
  }

  @Override
  public void eventBusAnswerFailed(EventBusFailure why) {
    eventBusFailed.get(why).increment();
  }

  @Override
  public void eventBusResent() {
    eventBusResent.increment();
  }

  @Override
  public void eventBusHeld(long delta) {
    eventBusHeld.addAndGet(delta);
  }

  @Override
  public void eventBusConsumer(boolean present) {
    eventBusConsumer.set(present ? 1 : 0);
  }

  MeterRegistry registry() {
    return registry;
  }
}
