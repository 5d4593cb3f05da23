package io.frameecho.server;

/**
 * Why a connection ended. Each connection has exactly one, decided by the first event that ends it;
 * operators see it in the {@code reason} tag of the closed-connections meter and in the connection's log.
 */
public enum CloseReason {
  /** The client closed at a frame boundary: the book's "client closed". */
  CLIENT_CLOSED("client closed"),
  /** The client closed inside a header or a body: the book's "unexpected EOF". */
  UNEXPECTED_EOF("unexpected EOF"),
  /** A header announced more than {@code maxFrameSize} bytes. */
  PROTOCOL_ERROR("protocol error"),
  /** The request handler failed or threw; the protocol has no error frame, so the connection ends. */
  HANDLER_FAILED("handler failed"),
  /** A reset or another IO error on the socket. */
  IO_ERROR("IO error"),
  /** No complete request for {@code idleTimeoutMs}. */
  IDLE_TIMEOUT("idle timeout"),
  /** A frame that had started was not complete within {@code frameTimeoutMs}. */
  FRAME_TIMEOUT("frame timeout"),
  /**
   * The buffer budget was spent and others waited, while this connection's incomplete frame made no progress
   * for {@code budgetGraceMs} (evicted after its earlier responses, the largest such first), or its client was sent no
   * byte of its responses for a quarter of {@code writeStallTimeoutMs} (cut, the responses dropped).
   */
  BUDGET_EVICTED("budget evicted"),
  /**
   * Every slot of {@code maxConnections} was taken when a new client arrived, and this connection had been idle
   * longest (connected and quiet for {@code idleGiveWayMs} at least, owing nothing): it gave its slot to the newcomer.
   */
  IDLE_EVICTED("idle, closed for a newcomer"),
  /** Responses went unread for {@code writeStallTimeoutMs}. */
  WRITE_STALL("write stall"),
  /** The server is shutting down. */
  SERVER_SHUTDOWN("server shutdown");

  private final String description;

  CloseReason(String description) {
    this.description = description;
  }

  @Override
  public String toString() {
    return description;
  }
}
