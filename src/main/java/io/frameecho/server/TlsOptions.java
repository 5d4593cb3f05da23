package io.frameecho.server;

import io.frameecho.server.impl.ConfigKeys;
import io.frameecho.server.impl.OptionKey;
import io.vertx.core.json.JsonObject;


/**
 * The {@code "tls"} section: serve TLS with a PEM certificate (chain) and its PEM private key.
 * <p>
 * Each key ({@code tls.…}) is described once, in the configuration table of {@code src/docs/OPERATING.md}.
 */
public class TlsOptions {


  private String certPath;
  private String keyPath;

  public TlsOptions() {
  }

  public TlsOptions(TlsOptions other) {
    OptionKey.copy(other, this, ConfigKeys.TLS);
  }

  /**
   * @throws IllegalArgumentException naming the key ({@code tls.…}) on an unknown key, a bad value or a
   *   missing path
   */
  public TlsOptions(JsonObject json) {
    OptionKey.readJson(json, "tls.", ConfigKeys.TLS, this);
    if (certPath == null || keyPath == null) {
      throw new IllegalArgumentException("tls: both tls.certPath and tls.keyPath are required");
    }
  }

  public JsonObject toJson() {
    return OptionKey.toJson(this, ConfigKeys.TLS);
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
