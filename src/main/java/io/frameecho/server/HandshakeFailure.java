package io.frameecho.server;

/**
 * Why a TLS handshake did not complete; operators see it in the {@code cause} tag of the failed-handshakes meter
 * and in the rate-limited log line. A connection that fails its handshake held a slot of {@code maxConnections}
 * (and of {@code maxConnectionsPerIp}) from accept until it ended; it never reached the frame protocol.
 */
public enum HandshakeFailure {
  /** No complete handshake within {@code netServerOptions.sslHandshakeTimeout} (a client that never sends a ClientHello, say). */
  TIMEOUT("timeout"),
  /** The client's first bytes were not a TLS record: a plain-text client on the TLS port. */
  NOT_TLS("not_tls"),
  /** Any other end before the handshake completed: no common protocol or cipher, a certificate refused, the client gone. */
  FAILED("failed");

  private final String tag;

  HandshakeFailure(String tag) {
    this.tag = tag;
  }

  /** The meter's {@code cause} tag. */
  public String tag() {
    return tag;
  }
}
