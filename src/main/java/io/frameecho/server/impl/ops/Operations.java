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
 * One Vert.x instance's operational state across all its frame-echo servers: readiness and the meter registries the
 * endpoint serves. Micrometer is loaded only once a server enables metrics.
 */
public final class Operations implements Shareable {

  private static final String SHARED_KEY = "frame-echo.operations";
  private static final String ENDPOINT_CONTEXT_KEY = "frame-echo.operations.endpoint-context";

  private final String transport;
  /** Created by the first server with metrics on, which loads Micrometer. */
  private volatile MeterRegistries registries;
  private final AtomicInteger listening = new AtomicInteger();
  private final AtomicInteger draining = new AtomicInteger();
  /** Each listening server's check of whether a newcomer would be served now. */
  private final Set<Supplier<Future<Boolean>>> rooms = ConcurrentHashMap.newKeySet();

  private Operations(String transport) {
    this.transport = transport;
  }

  /** The instance's shared state, created by its first server; {@code transport} names its event loops. */
  public static Operations shared(Vertx vertx, String transport) {
    return (Operations) vertx.sharedData().getLocalMap(SHARED_KEY).computeIfAbsent(SHARED_KEY, k -> new Operations(transport));
  }

  /** Opens the endpoint on {@code context}, so probes do not queue behind frame traffic; call before deploying. */
  public static void openEndpointOn(Vertx vertx, Context context) {
    vertx.sharedData().getLocalMap(SHARED_KEY).put(ENDPOINT_CONTEXT_KEY, new EndpointContext(context));
  }

  /** The context set by {@link #openEndpointOn}, or null for the caller's. */
  public static Context endpointContext(Vertx vertx) {
    Object held = vertx.sharedData().getLocalMap(SHARED_KEY).get(ENDPOINT_CONTEXT_KEY);
    return held instanceof EndpointContext e ? e.context() : null;
  }

  private record EndpointContext(Context context) implements Shareable {
  }

  /**
   * Built-in meters tagged {@code server} in the registry {@code options} names, or none when metrics are off.
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

  /** The Prometheus exposition of every registry in use, or null when none is Prometheus. */
  public String scrape() {
    MeterRegistries r = registries;
    return r == null ? null : r.scrape();
  }

  /** Why {@code /metrics} cannot show {@code meters}, or null when it can. */
  public String whyNotScraped(FrameEchoMetrics meters, MetricsOptions options) {
    if (registries != null && meters instanceof MicrometerFrameEchoMetrics m) {
      return MeterRegistries.whyNotScraped(m.registry(), options.getRegistryName());
    }
    return "the server reports to the application's FrameEchoMetrics, not to a Micrometer registry";
  }

  /** Adds a listening server's limits to its built-in gauges; balanced by {@link #remove}. */
  public void add(FrameEchoMetrics meters, ConnectionLimits limits) {
    // Check registries first so that, with metrics off, Micrometer stays unloaded.
    if (registries != null && meters instanceof MicrometerFrameEchoMetrics m) {
      m.add(limits);
    }
  }

  /** Removes a server's limits from its gauges. */
  public void remove(FrameEchoMetrics meters, ConnectionLimits limits) {
    if (registries != null && meters instanceof MicrometerFrameEchoMetrics m) {
      m.remove(limits);
    }
  }

  /** A server started listening. */
  public void listening() {
    listening.incrementAndGet();
  }

  /** A server stopped listening. */
  public void stoppedListening() {
    listening.decrementAndGet();
  }

  /** Readiness is false from now on: a server is about to stop accepting. */
  public void draining() {
    draining.incrementAndGet();
  }

  /** That server has shut down; balances {@link #draining}. */
  public void drained() {
    draining.decrementAndGet();
  }

  /** Adds a listening server's newcomer check; balanced by {@link #noRoomCheck}. */
  public void roomCheck(Supplier<Future<Boolean>> room) {
    rooms.add(room);
  }

  /** Removes a server's newcomer check. */
  public void noRoomCheck(Supplier<Future<Boolean>> room) {
    rooms.remove(room);
  }

  /** This Vert.x instance's readiness; see {@code FrameEchoServer.ready}. */
  public static Future<Boolean> ready(Vertx vertx) {
    return shared(vertx, Internals.transportName(vertx)).ready();
  }

  /** Whether a new client would be served: some server listens, none drains, and one has room for a newcomer. */
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
