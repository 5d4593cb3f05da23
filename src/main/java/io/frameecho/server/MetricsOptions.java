package io.frameecho.server;

import io.frameecho.server.impl.ConfigValues;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

import java.util.Set;

/**
 * The {@code "metrics"} section: frame-echo's meters, decided per server, and, when asked for ({@code endpoint}), an
 * HTTP endpoint on its own port with Prometheus metrics at {@code /metrics} and health at {@code /health/live} and
 * {@code /health/ready}. Off by default. The meters go to the Micrometer registry named {@code registryName}, or else
 * Vert.x's default one (Vert.x started with {@code vertx-micrometer-metrics}), or else a Prometheus registry of
 * frame-echo's own; each server's meters carry its {@code server} tag. {@code /metrics} shows a Prometheus registry
 * only (or a composite holding one); over another kind the endpoint serves health, and says so once at start.
 * <p>
 * Each key ({@code metrics.…}) is described once, in the configuration table of {@code src/docs/OPERATING.md}.
 */
@DataObject
@JsonGen(publicConverter = false)
public class MetricsOptions {

  public static final boolean DEFAULT_ENABLED = false;
  public static final String DEFAULT_HOST = "127.0.0.1";
  public static final int DEFAULT_PORT = 9464;
  /** No HTTP port of ours unless the application asks; the runnable jar asks unless its configuration says {@code false}. */
  public static final boolean DEFAULT_ENDPOINT = false;
  public static final String DEFAULT_REGISTRY_NAME = "";
  public static final String DEFAULT_SERVER = "";

  private boolean enabled = DEFAULT_ENABLED;
  private String host = DEFAULT_HOST;
  private int port = DEFAULT_PORT;
  private boolean endpoint = DEFAULT_ENDPOINT;
  private String registryName = DEFAULT_REGISTRY_NAME;
  private String server = DEFAULT_SERVER;

  /** The defaults. */
  public MetricsOptions() {
  }

  /** A copy of {@code other}. */
  public MetricsOptions(MetricsOptions other) {
    MetricsOptionsConverter.fromJson(other.toJson(), this);
  }

  /**
   * Reads the {@code metrics} section.
   *
   * @throws IllegalArgumentException naming the key ({@code metrics.…}) on an unknown key or a bad value
   */
  public MetricsOptions(JsonObject json) {
    ConfigValues.check(json, "metrics.", new MetricsOptions().toJson(), Set.of());
    MetricsOptionsConverter.fromJson(json, this);
  }

  /** These options as JSON, as the JSON constructor reads them. */
  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    MetricsOptionsConverter.toJson(this, json);
    return json;
  }

  /** {@code metrics.enabled}. */
  public boolean isEnabled() {
    return enabled;
  }

  /** Whether frame-echo keeps its meters. */
  public MetricsOptions setEnabled(boolean enabled) {
    this.enabled = enabled;
    return this;
  }

  /** {@code metrics.host}. */
  public String getHost() {
    return host;
  }

  /** The address the HTTP endpoint binds. */
  public MetricsOptions setHost(String host) {
    this.host = ConfigValues.requireHost("metrics.host", host);
    return this;
  }

  /** {@code metrics.port}. */
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

  /** {@code metrics.endpoint}. */
  public boolean isEndpoint() {
    return endpoint;
  }

  /**
   * Whether {@link FrameEchoVerticle} opens the HTTP endpoint ({@code host}, {@code port}) with the meters and health,
   * when {@code enabled}. False by default (an application exports its registry and health itself); the runnable jar
   * sets it to true when its configuration does not say.
   */
  public MetricsOptions setEndpoint(boolean endpoint) {
    this.endpoint = endpoint;
    return this;
  }

  /** {@code metrics.registryName}. */
  public String getRegistryName() {
    return registryName;
  }

  /** The Micrometer registry for the meters, by its name in Vert.x; empty: Vert.x's default, or frame-echo's own. */
  public MetricsOptions setRegistryName(String registryName) {
    this.registryName = java.util.Objects.requireNonNull(registryName, "metrics.registryName");
    return this;
  }

  /** {@code metrics.server}. */
  public String getServer() {
    return server;
  }

  /** The {@code server} tag on frame-echo's meters; empty: the frame port as configured. Servers with one value count together. */
  public MetricsOptions setServer(String server) {
    this.server = java.util.Objects.requireNonNull(server, "metrics.server");
    return this;
  }
}
