package io.frameecho.server.impl.ops;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.vertx.micrometer.backends.BackendRegistries;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The registries one Vert.x instance's servers report to, with each server tag's meters created once per registry so
 * a redeployed server finds its meters and no gauge is registered twice. Thread-safe.
 */
final class MeterRegistries {

  private static final String VERTX_REGISTRIES = "io.vertx.micrometer.backends.BackendRegistries";

  private final String transport;
  /** Created when no other registry is available. */
  private MeterRegistry own;
  private final Map<MeterRegistry, Map<String, MicrometerFrameEchoMetrics>> servers = new IdentityHashMap<>();

  MeterRegistries(String transport) {
    this.transport = transport;
  }

  /**
   * The meters tagged {@code server} in the registry named {@code registryName}, or the default when empty.
   *
   * @throws IllegalArgumentException no registry has that name
   * @throws IllegalStateException no registry is available and Prometheus is not on the class path
   */
  synchronized MicrometerFrameEchoMetrics serverMeters(String registryName, String server) {
    MeterRegistry registry = registry(registryName);
    Map<String, MicrometerFrameEchoMetrics> byServer = servers.computeIfAbsent(registry, r -> {
      processMeters(r, transport);
      return new HashMap<>();
    });
    return byServer.computeIfAbsent(server, s -> new MicrometerFrameEchoMetrics(registry, s));
  }

  private MeterRegistry registry(String name) {
    boolean vertxMetrics = present(VERTX_REGISTRIES);
    if (!name.isEmpty()) {
      MeterRegistry named = vertxMetrics ? BackendRegistries.getNow(name) : null;
      if (named == null) {
        throw new IllegalArgumentException("invalid frame-echo configuration: metrics.registryName: no Micrometer registry "
          + "named '" + name + "' (Vert.x knows a registry by the name given to MicrometerMetricsOptions.setRegistryName)");
      }
      return named;
    }
    MeterRegistry registry = vertxMetrics ? BackendRegistries.getDefaultNow() : null;
    if (registry != null) {
      return registry;
    }
    if (own == null) {
      if (!present(PrometheusRegistry.CLASS_NAME)) {
        throw new IllegalStateException("metrics.enabled: needs Vert.x started with Micrometer metrics "
          + "(io.vertx:vertx-micrometer-metrics) or io.micrometer:micrometer-registry-prometheus on the class path");
      }
      own = PrometheusRegistry.create();
    }
    return own;
  }

  /** Registers the build-info meter and, unless already bound, file-descriptor meters; once per registry. */
  private static void processMeters(MeterRegistry registry, String transport) {
    if (registry.find("frame.echo.build.info").tag("transport", transport).gauge() == null) {
      Gauge.builder("frame.echo.build.info", () -> 1)
        .tag("version", BuildInfo.frameEchoVersion()).tag("vertx_version", BuildInfo.vertxVersion()).tag("transport", transport)
        .description("frame-echo's version, the Vert.x version and the event-loop transport; always 1")
        .register(registry);
    }
    if (registry.find("process.files.open").gauge() == null) {
      new FileDescriptorMetrics().bindTo(registry);
    }
  }

  /** The text of every Prometheus registry in use, directly or in a composite, or null when there is none. */
  synchronized String scrape() {
    if (!present(PrometheusRegistry.CLASS_NAME)) {
      return null;
    }
    Map<MeterRegistry, Boolean> prometheus = new IdentityHashMap<>();
    for (MeterRegistry registry : servers.keySet()) {
      MeterRegistry found = PrometheusRegistry.find(registry);
      if (found != null) {
        prometheus.put(found, true);
      }
    }
    List<String> texts = new ArrayList<>();
    for (MeterRegistry registry : prometheus.keySet()) {
      texts.add(PrometheusRegistry.scrape(registry));
    }
    return texts.isEmpty() ? null : String.join("", texts);
  }

  /** Why {@code /metrics} cannot show {@code registry}, or null when it is or holds a Prometheus registry. */
  static String whyNotScraped(MeterRegistry registry, String registryName) {
    if (present(PrometheusRegistry.CLASS_NAME) && PrometheusRegistry.find(registry) != null) {
      return null;
    }
    String which = registryName.isEmpty() ? "Vert.x's default Micrometer registry" : "the Micrometer registry '" + registryName + "'";
    return "frame-echo's meters go to " + which + ", a " + describe(registry) + ", which is not a PrometheusMeterRegistry"
      + (present(PrometheusRegistry.CLASS_NAME) ? "" : " (io.micrometer:micrometer-registry-prometheus is not on the class path)");
  }

  private static String describe(MeterRegistry registry) {
    if (registry instanceof CompositeMeterRegistry composite) {
      return "CompositeMeterRegistry of " + composite.getRegistries().stream().map(MeterRegistries::describe).toList();
    }
    return registry.getClass().getSimpleName();
  }

  static boolean present(String className) {
    try {
      Class.forName(className, false, MeterRegistries.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }
}
