package io.frameecho.server.impl;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.Shareable;
import io.vertx.micrometer.backends.BackendRegistries;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * What operators see of one server process: its metrics registry and frame-echo's meters, and whether it
 * is ready for traffic (at least one server listening, none draining). Shared by every verticle instance
 * of a Vert.x instance.
 */
public final class Operations implements Shareable {

  private static final String SHARED_KEY = "frame-echo.operations";

  private final MeterRegistry registry;
  private final FrameEchoMetrics metrics;
  private final AtomicInteger listening = new AtomicInteger();
  private final AtomicInteger draining = new AtomicInteger();

  private Operations(MeterRegistry registry, FrameEchoMetrics metrics) {
    this.registry = registry;
    this.metrics = metrics;
  }

  /**
   * The process's operations state. With metrics on, frame-echo's meters join Vert.x's own registry when
   * Vert.x was started with Micrometer metrics, or a Prometheus registry of their own otherwise.
   */
  public static Operations shared(Vertx vertx, ConnectionLimits limits, boolean metricsEnabled) {
    return (Operations) vertx.sharedData().getLocalMap(SHARED_KEY).computeIfAbsent(SHARED_KEY, k -> {
      if (!metricsEnabled) {
        return new Operations(null, FrameEchoMetrics.NONE);
      }
      MeterRegistry registry = BackendRegistries.getDefaultNow();
      if (registry == null) {
        registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
      }
      return new Operations(registry, new MicrometerFrameEchoMetrics(registry, limits));
    });
  }

  public FrameEchoMetrics metrics() {
    return metrics;
  }

  /** The Prometheus text exposition of every meter, or null when the registry is not a Prometheus one. */
  public String scrape() {
    return registry instanceof PrometheusMeterRegistry prometheus ? prometheus.scrape() : null;
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

  public boolean ready() {
    return listening.get() > 0 && draining.get() == 0;
  }
}
