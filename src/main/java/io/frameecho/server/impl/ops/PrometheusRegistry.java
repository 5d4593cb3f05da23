package io.frameecho.server.impl.ops;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/**
 * frame-echo's own Prometheus registry, for when the application has none. A class of its own so that
 * Micrometer's Prometheus module (optional) is loaded only when used.
 */
final class PrometheusRegistry {

  static final String CLASS_NAME = "io.micrometer.prometheusmetrics.PrometheusMeterRegistry";

  private PrometheusRegistry() {
  }

  static MeterRegistry create() {
    return new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  }

  /** The text exposition of {@code registry}, or null when it is not a Prometheus registry. */
  static String scrape(MeterRegistry registry) {
    return registry instanceof PrometheusMeterRegistry prometheus ? prometheus.scrape() : null;
  }
}
