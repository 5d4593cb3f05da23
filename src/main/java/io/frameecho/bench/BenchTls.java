package io.frameecho.bench;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;

import javax.net.ssl.SSLException;
import java.io.File;

/**
 * TLS for the load generator's connections, with the same choices as {@code client}: trust the JVM's
 * default authorities or one PEM certificate (or CA), a client certificate for a server that asks for one, and check
 * the host name unless told not to.
 *
 * @param trustPem a PEM certificate or CA to trust instead of the JVM's defaults, or null
 * @param certPem the client's PEM certificate (mutual TLS), or null
 * @param keyPem its PKCS#8 PEM private key, or null
 * @param verifyHost check that the server's certificate names the host (off for a self-signed one without it)
 */
public record BenchTls(String trustPem, String certPem, String keyPem, boolean verifyHost) {

  /** Builds the client context; fails with the file at fault. */
  public SslContext context() {
    // Netty 4.2 checks the host name unless told otherwise; say it either way.
    SslContextBuilder builder = SslContextBuilder.forClient().endpointIdentificationAlgorithm(verifyHost ? "HTTPS" : null);
    if (trustPem != null) {
      builder.trustManager(new File(trustPem));
    }
    if (certPem != null) {
      try {
        builder.keyManager(new File(certPem), new File(keyPem));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("--cert " + certPem + " --key " + keyPem + ": not a PEM certificate and its "
          + "PKCS#8 private key: " + e.getMessage(), e);
      }
    }
    try {
      return builder.build();
    } catch (SSLException | IllegalArgumentException e) {
      throw new IllegalArgumentException("--trust " + trustPem + ": not a PEM certificate: " + e.getMessage(), e);
    }
  }
}
