package io.frameecho.server;

/**
 * Why a TLS handshake, or the PROXY protocol header that comes before it, did not complete; operators see it in the
 * {@code cause} tag of the failed-handshakes meter and in the rate-limited log line. A connection that fails its
 * handshake held a slot of {@code maxConnections} (and, for TLS, of {@code maxConnectionsPerIp}) from accept until it
 * ended; it never reached the frame protocol.
 */
public enum HandshakeFailure {
  /** No complete handshake within {@code netServerOptions.sslHandshakeTimeout} (a client that never sends a ClientHello, say). */
  TIMEOUT("timeout"),
  /** The client's first bytes were not a TLS record: a plain-text client on the TLS port. */
  NOT_TLS("not_tls"),
  /** Any other end before the handshake completed: no common protocol or cipher, a certificate refused, the client gone. */
  FAILED("failed"),
  /** With {@code useProxyProtocol}: the connection's first bytes were not a valid PROXY protocol header (v1 or v2). */
  PROXY_INVALID("proxy_invalid"),
  /** With {@code useProxyProtocol}: no complete PROXY protocol header within {@code netServerOptions.proxyProtocolTimeout}. */
  PROXY_TIMEOUT("proxy_timeout"),
  /** With {@code proxyTrustedPeers}: a peer outside them, refused before its header was read (it held no slot). */
  PROXY_UNTRUSTED("proxy_untrusted");

  private final String tag;

  HandshakeFailure(String tag) {
    this.tag = tag;
  }

  /** What failed, for the log: {@code TLS handshake} or {@code PROXY protocol header}. */
  public String what() {
    return name().startsWith("PROXY") ? "PROXY protocol header" : "TLS handshake";
  }

  /** The meter's {@code cause} tag. */
  public String tag() {
    return tag;
  }
}
