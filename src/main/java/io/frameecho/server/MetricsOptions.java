package io.frameecho.server;

import io.vertx.core.json.JsonObject;

import java.util.List;

/**
 * The {@code "metrics"} section: an HTTP endpoint on its own port with Prometheus metrics at
 * {@code /metrics} and health at {@code /health/live} and {@code /health/ready}. Off by default.
 */
public class MetricsOptions {

  public static final boolean DEFAULT_ENABLED = false;
  /** Loopback: metrics and health are unauthenticated, so they reach the network only when asked to. */
  public static final String DEFAULT_HOST = "127.0.0.1";
  /** Not 9090, Prometheus's own port: 9464, where OpenTelemetry's Prometheus exporter serves an application's metrics. */
  public static final int DEFAULT_PORT = 9464;

  /** The section's keys, in {@code conf/config.json}'s order: the one place each is written. */
  static final List<OptionKey<MetricsOptions, ?>> KEYS = List.of(
    OptionKey.bool("enabled", MetricsOptions::isEnabled, MetricsOptions::setEnabled),
    OptionKey.string("host", MetricsOptions::getHost, MetricsOptions::setHost),
    OptionKey.integer("port", MetricsOptions::getPort, MetricsOptions::setPort));

  private boolean enabled = DEFAULT_ENABLED;
  private String host = DEFAULT_HOST;
  private int port = DEFAULT_PORT;

  public MetricsOptions() {
  }

  public MetricsOptions(MetricsOptions other) {
    OptionKey.copy(other, this, KEYS);
  }

  /**
   * @throws IllegalArgumentException naming the key ({@code metrics.…}) on an unknown key or a bad value
   */
  public MetricsOptions(JsonObject json) {
    OptionKey.readJson(json, "metrics.", KEYS, this);
  }

  public JsonObject toJson() {
    return OptionKey.toJson(this, KEYS);
  }

  public boolean isEnabled() {
    return enabled;
  }

  public MetricsOptions setEnabled(boolean enabled) {
    this.enabled = enabled;
    return this;
  }

  public String getHost() {
    return host;
  }

  public MetricsOptions setHost(String host) {
    this.host = ConfigValues.requireHost("metrics.host", host);
    return this;
  }

  public int getPort() {
    return port;
  }

  /** The HTTP port; 0 picks a free one. Instances in one process share it. */
  public MetricsOptions setPort(int port) {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("metrics.port: " + port + " is out of range (0 to 65535)");
    }
    this.port = port;
    return this;
  }
}
