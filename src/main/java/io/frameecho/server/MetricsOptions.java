package io.frameecho.server;

import io.vertx.core.json.JsonObject;

import java.util.Map;

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

  private boolean enabled = DEFAULT_ENABLED;
  private String host = DEFAULT_HOST;
  private int port = DEFAULT_PORT;

  public MetricsOptions() {
  }

  public MetricsOptions(MetricsOptions other) {
    this.enabled = other.enabled;
    this.host = other.host;
    this.port = other.port;
  }

  /**
   * @throws IllegalArgumentException naming the key ({@code metrics.…}) on an unknown key or a bad value
   */
  public MetricsOptions(JsonObject json) {
    for (Map.Entry<String, Object> entry : json) {
      String key = "metrics." + entry.getKey();
      Object value = entry.getValue();
      switch (entry.getKey()) {
        case "enabled":
          setEnabled(ConfigValues.bool(key, value));
          break;
        case "host":
          setHost(ConfigValues.string(key, value));
          break;
        case "port":
          setPort(ConfigValues.integer(key, value));
          break;
        default:
          throw new IllegalArgumentException("unknown configuration key '" + key + "'; known keys: metrics.enabled, metrics.host, metrics.port");
      }
    }
  }

  public JsonObject toJson() {
    return new JsonObject().put("enabled", enabled).put("host", host).put("port", port);
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
