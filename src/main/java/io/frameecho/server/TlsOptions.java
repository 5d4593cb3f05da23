package io.frameecho.server;

import io.vertx.core.json.JsonObject;

import java.util.Map;

/** The {@code "tls"} section: serve TLS with a PEM certificate (chain) and its PEM private key. */
public class TlsOptions {

  private String certPath;
  private String keyPath;

  public TlsOptions() {
  }

  public TlsOptions(TlsOptions other) {
    this.certPath = other.certPath;
    this.keyPath = other.keyPath;
  }

  /**
   * @throws IllegalArgumentException naming the key ({@code tls.…}) on an unknown key, a bad value or a
   *   missing path
   */
  public TlsOptions(JsonObject json) {
    for (Map.Entry<String, Object> entry : json) {
      String key = "tls." + entry.getKey();
      switch (entry.getKey()) {
        case "certPath":
          setCertPath(ConfigValues.string(key, entry.getValue()));
          break;
        case "keyPath":
          setKeyPath(ConfigValues.string(key, entry.getValue()));
          break;
        default:
          throw new IllegalArgumentException("unknown configuration key '" + key + "'; known keys: tls.certPath, tls.keyPath");
      }
    }
    if (certPath == null || keyPath == null) {
      throw new IllegalArgumentException("tls: both tls.certPath and tls.keyPath are required");
    }
  }

  public JsonObject toJson() {
    return new JsonObject().put("certPath", certPath).put("keyPath", keyPath);
  }

  public String getCertPath() {
    return certPath;
  }

  /** PEM file with the server's certificate, then any intermediates. */
  public TlsOptions setCertPath(String certPath) {
    this.certPath = requirePath("tls.certPath", certPath);
    return this;
  }

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
