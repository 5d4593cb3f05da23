package io.frameecho.server;

/**
 * How a connection lost a request its client sent: operators see it in the {@code cause} tag of the lost-requests
 * meter and in the shutdown line. Each connection counts once per cause, as it ends: at least one request was lost
 * on it (a client that pipelines may have lost more).
 */
public enum RequestLoss {
  /**
   * Request bytes reached the connection after the server had decided to close it (a request read after its FIN, or
   * a frame half-read when the close was decided), and were discarded unanswered. The client sees end of stream with
   * that request unanswered; only a client that knows it is idempotent may re-send it.
   */
  AFTER_CLOSE("after_close"),
  /** The connection was cut (shutdown's deadline, a write stall, an IO error) with answers or responses undelivered. */
  CUT("cut");

  private final String tag;

  RequestLoss(String tag) {
    this.tag = tag;
  }

  /** The meter's {@code cause} tag. */
  public String tag() {
    return tag;
  }
}
