package io.frameecho.server;

/** Why a new connection was turned away; operators see it in the log and the {@code limit} tag of the rejections meter. */
public enum Rejection {
  MAX_CONNECTIONS("maxConnections"),
  MAX_CONNECTIONS_PER_IP("maxConnectionsPerIp");

  private final String key;

  Rejection(String key) {
    this.key = key;
  }

  /** The configuration key of the limit. */
  public String key() {
    return key;
  }
}
