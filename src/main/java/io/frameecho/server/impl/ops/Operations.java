package io.frameecho.server.impl.ops;

import io.frameecho.server.impl.netty.Internals;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.MetricsOptions;
import io.frameecho.server.impl.shared.ConnectionLimits;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.Shareable;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * What operators see of one Vert.x instance's frame-echo servers: whether the process is ready for traffic (at
 * least one server listening, none draining), and the registries their meters went to, for the endpoint. Shared
 * by every server in the Vert.x instance, whichever deployment it belongs to; meters are decided per server
 * ({@link #meters}).
 * <p>
 * Micrometer is an optional dependency: nothing of it is loaded unless a server enables metrics.
 */
public final class Operations implements Shareable {

  private static final String SHARED_KEY = "frame-echo.operations";
  private static final String ENDPOINT_CONTEXT_KEY = "frame-echo.operations.endpoint-context";

  private final String transport;
  /** Made by the first server with metrics on: Micrometer is loaded from then on. */
  private volatile MeterRegistries registries;
  private final AtomicInteger listening = new AtomicInteger();
  private final AtomicInteger draining = new AtomicInteger();
  /** Each listening server's answer to "would a newcomer be served now?". */
  private final Set<Supplier<Future<Boolean>>> rooms = ConcurrentHashMap.newKeySet();

  private Operations(String transport) {
    this.transport = transport;
  }

  /** The Vert.x instance's operations state, created by its first server; {@code transport} names its event loops. */
  public static Operations shared(Vertx vertx, String transport) {
    return (Operations) vertx.sharedData().getLocalMap(SHARED_KEY).computeIfAbsent(SHARED_KEY, k -> new Operations(transport));
  }

  /**
   * Has the metrics and health endpoint of {@code vertx}'s servers opened on {@code context} (an event loop of its
   * own, so that a probe is not queued behind frame traffic) instead of the opening server's event loop. The
   * runnable jar does; an embedding application may, before deploying.
   */
  public static void openEndpointOn(Vertx vertx, Context context) {
    vertx.sharedData().getLocalMap(SHARED_KEY).put(ENDPOINT_CONTEXT_KEY, new EndpointContext(context));
  }

  /** The context given to {@link #openEndpointOn}, or null: the endpoint opens on the caller's. */
  public static Context endpointContext(Vertx vertx) {
    Object held = vertx.sharedData().getLocalMap(SHARED_KEY).get(ENDPOINT_CONTEXT_KEY);
    return held instanceof EndpointContext e ? e.context() : null;
  }

  private record EndpointContext(Context context) implements Shareable {
  }

  /**
   * Where a server's connections report: with {@code options} enabled, the built-in meters tagged
   * {@code server} in the registry {@code options} names (or the default one, or frame-echo's own); nothing otherwise.
   *
   * @throws IllegalArgumentException {@code metrics.registryName} names no registry
   * @throws IllegalStateException metrics are enabled but Micrometer is not on the class path
   */
  public FrameEchoMetrics meters(MetricsOptions options, String server) {
    if (!options.isEnabled()) {
      return FrameEchoMetrics.NONE;
    }
    MeterRegistries r = registries;
    if (r == null) {
      synchronized (this) {
        if (registries == null) {
          registries = new MeterRegistries(transport);
        }
        r = registries;
      }
    }
    return r.serverMeters(options.getRegistryName(), server);
  }

  /** The Prometheus text exposition of every registry a server reports to, or null when none is a Prometheus one. */
  public String scrape() {
    MeterRegistries r = registries;
    return r == null ? null : r.scrape();
  }

  /**
   * Why {@code /metrics} cannot show the meters of a server that reports to {@code meters} (configured by
   * {@code options}), or null when it can: they are in a Prometheus registry, or in a composite that holds one.
   */
  public String whyNotScraped(FrameEchoMetrics meters, MetricsOptions options) {
    if (registries != null && meters instanceof MicrometerFrameEchoMetrics m) {
      return MeterRegistries.whyNotScraped(m.registry(), options.getRegistryName());
    }
    return "the server reports to the application's FrameEchoMetrics, not to a Micrometer registry";
  }

  /** A listening server's limits join the gauges of its meters (when they are the built-in ones); balanced by {@link #remove}. */
  public void add(FrameEchoMetrics meters, ConnectionLimits limits) {
    // Checked against the registries first: with metrics off, the meters' class (and Micrometer) stays unloaded.
    if (registries != null && meters instanceof MicrometerFrameEchoMetrics m) {
      m.add(limits);
    }
  }

  public void remove(FrameEchoMetrics meters, ConnectionLimits limits) {
    if (registries != null && meters instanceof MicrometerFrameEchoMetrics m) {
      m.remove(limits);
    }
  }

  public void listening() {
    listening.incrementAndGet();
  }

  public void stoppedListening() {
    listening.decrementAndGet();
  }

  /** Readiness turns false from now on: the server is about to stop accepting. */
  public void draining() {
    draining.incrementAndGet();
  }

  /** A listening server answers readiness with {@code room}; balanced by {@link #noRoomCheck}. */
  public void roomCheck(Supplier<Future<Boolean>> room) {
    rooms.add(room);
  }

  public void noRoomCheck(Supplier<Future<Boolean>> room) {
    rooms.remove(room);
  }

  /**
   * Whether a new client would be served: a server is listening and none is draining, and one of them has room
   * for a newcomer (a free slot or an idle connection to give way, and a consumer for its event-bus address).
   */
  /** See {@code FrameEchoServer.ready}: this Vert.x's frame-echo servers' readiness. */
  public static Future<Boolean> ready(Vertx vertx) {
    return shared(vertx, Internals.transportName(vertx)).ready();
  }

  public Future<Boolean> ready() {
    if (listening.get() <= 0 || draining.get() != 0) {
      return Future.succeededFuture(false);
    }
    List<Future<Boolean>> answers = rooms.stream().map(Supplier::get).toList();
    if (answers.isEmpty()) {
      return Future.succeededFuture(true);
    }
    return Future.join(answers).transform(ar -> Future.succeededFuture(
      answers.stream().anyMatch(a -> a.succeeded() && a.result())));
  }
}
