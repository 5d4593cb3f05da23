package io.frameecho.server.impl;

/**
 * What a connection reports at its decision points. {@link #NONE} does nothing (and reads no clock), so a
 * server without metrics pays nothing per frame.
 */
public interface FrameEchoMetrics {

  FrameEchoMetrics NONE = new FrameEchoMetrics() {
  };

  /** A request frame is complete; returns the time to hand back to {@link #responseQueued}. */
  default long requestReceived(int payloadBytes) {
    return 0;
  }

  /** The response to the request received at {@code receivedNanos} went to the write queue. */
  default void responseQueued(long receivedNanos) {
  }

  default void protocolError() {
  }

  default void connectionRejected(ConnectionLimits.Rejection why) {
  }

  default void connectionClosed(CloseReason reason) {
  }

  /** The connection stopped reading (any back-pressure reason); balanced by {@link #readingResumed}. */
  default void readingPaused() {
  }

  default void readingResumed() {
  }

  /** The Prometheus text exposition of the registry these meters are in, or null when there is none. */
  default String scrape() {
    return null;
  }
}
