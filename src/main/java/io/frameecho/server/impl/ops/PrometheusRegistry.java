package io.frameecho.server.impl.ops;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/**
 * frame-echo's own Prometheus registry, for when the application has none, and the Prometheus registry behind an
 * application's. A class of its own so that Micrometer's Prometheus module (optional) is loaded only when used.
 */
final class PrometheusRegistry {

  static final String CLASS_NAME = "io.micrometer.prometheusmetrics.PrometheusMeterRegistry";

  private PrometheusRegistry() {
  }

  static MeterRegistry create() {
    return new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  }

  /**
   * The Prometheus registry that holds what is registered in {@code registry}: itself, or one a composite forwards
   * its meters to (Micrometer adds a composite's meters to each of its registries); null when there is none.
   */
  static MeterRegistry find(MeterRegistry registry) {
    if (registry instanceof PrometheusMeterRegistry) {
      return registry;
    }
    if (registry instanceof CompositeMeterRegistry composite) {
      for (MeterRegistry member : composite.getRegistries()) {
        MeterRegistry found = find(member);
        if (found != null) {
          return found;
        }
      }
    }
    return null;
  }

  /** The text exposition of {@code registry}, one {@link #find} returned. */
  static String scrape(MeterRegistry prometheus) {
    return ((PrometheusMeterRegistry) prometheus).scrape();
  }
}
