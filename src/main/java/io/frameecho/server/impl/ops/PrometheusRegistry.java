package io.frameecho.server.impl.ops;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/** Prometheus registry access, in a class of its own so the optional Prometheus module loads only when used. */
final class PrometheusRegistry {

  static final String CLASS_NAME = "io.micrometer.prometheusmetrics.PrometheusMeterRegistry";

  private PrometheusRegistry() {
  }

  static MeterRegistry create() {
    return new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  }

  /** {@code registry} if it is a Prometheus registry, else the first one inside a composite, or null. */
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

  /** The text exposition of a registry {@link #find} returned. */
  static String scrape(MeterRegistry prometheus) {
    return ((PrometheusMeterRegistry) prometheus).scrape();
  }
}
