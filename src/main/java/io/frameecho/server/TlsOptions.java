package io.frameecho.server;

import io.frameecho.server.impl.ConfigValues;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/**
 * The {@code "tls"} section: serve TLS with a PEM certificate (chain) and its PEM private key. Both paths are
 * required; a server refuses to start with one unset.
 * <p>
 * Each key ({@code tls.…}) is described once, in the configuration table of {@code src/docs/OPERATING.md}.
 */
@DataObject
@JsonGen(publicConverter = false)
public class TlsOptions {

  private String certPath;
  private String keyPath;

  /** Neither path set. */
  public TlsOptions() {
  }

  /** A copy of {@code other}; an unset path stays unset. */
  public TlsOptions(TlsOptions other) {
    TlsOptionsConverter.fromJson(other.toJson(), this);
  }

  /**
   * Reads the {@code tls} section (a path given as null stays unset).
   *
   * @throws IllegalArgumentException naming the key ({@code tls.…}) on an unknown key or a bad value
   */
  public TlsOptions(JsonObject json) {
    JsonObject keys = ConfigValues.allKeys().getJsonObject("tls");
    ConfigValues.check(json, "tls.", keys, keys.fieldNames());
    TlsOptionsConverter.fromJson(json, this);
  }

  /** These options as JSON, as the JSON constructor reads them; an unset path is left out. */
  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    TlsOptionsConverter.toJson(this, json);
    return json;
  }

  /** {@code tls.certPath}; null if unset. */
  public String getCertPath() {
    return certPath;
  }

  /** PEM file with the server's certificate, then any intermediates. */
  public TlsOptions setCertPath(String certPath) {
    this.certPath = requirePath("tls.certPath", certPath);
    return this;
  }

  /** {@code tls.keyPath}; null if unset. */
  public String getKeyPath() {
    return keyPath;
  }

  /** PEM file with the certificate's private key (PKCS#8 or PKCS#1). */
  public TlsOptions setKeyPath(String keyPath) {
    this.keyPath = requirePath("tls.keyPath", keyPath);
    return this;
  }

  private static String requirePath(String key, String path) {
    if (path == null || path.isBlank()) {
      throw new IllegalArgumentException(key + ": must be a file path");
    }
    return path;
  }
}
