package io.frameecho.server;

/**
 * What a server's connections report at their decision points, as Vert.x's metrics SPI reports a
 * {@code NetServer}'s: the built-in Micrometer meters implement it, and so can an application that counts
 * in a system of its own ({@link FrameEchoServer#metrics}). Every method is called on the connection's event
 * loop and must not block; the per-frame ones ({@link #requestReceived}, {@link #responseQueued}) are on the
 * hot path. {@link #NONE} does nothing (and reads no clock), so a server without metrics pays nothing per
 * frame.
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

  /** A header announced more than {@code maxFrameSize}: the connection closes after its earlier responses. */
  default void protocolError() {
  }

  /** A new connection was turned away by a limit. */
  default void connectionRejected(Rejection why) {
  }

  /**
   * A TLS handshake did not complete, for {@code why}: the socket, counted against the connection limits since
   * accept, is closed. Called once per failed handshake; a connection whose handshake completes goes on to
   * {@link #connectionClosed} instead.
   */
  default void handshakeFailed(HandshakeFailure why) {
  }

  /** A connection ended, for its one reason. */
  default void connectionClosed(CloseReason reason) {
  }

  /** The connection stopped reading (any back-pressure reason); balanced by {@link #readingResumed}. */
  default void readingPaused() {
  }

  default void readingResumed() {
  }

  // The event-bus handler's: called on an event loop (a connection's, or the one its timers and probes run on).

  /** The event-bus handler failed an answer, for {@code why}. */
  default void eventBusAnswerFailed(EventBusFailure why) {
  }

  /** The event-bus handler sent a request again ({@code handler.resendAfterMs}). */
  default void eventBusResent() {
  }

  /**
   * The bytes the event-bus handler counts in the buffer budget for copies Vert.x may still hold (re-sent requests,
   * timed-out ones toward a node that may not read them) changed by {@code delta}.
   */
  default void eventBusHeld(long delta) {
  }

  /** Whether the event-bus handler's address has a consumer, as its last request or probe found. */
  default void eventBusConsumer(boolean present) {
  }
}
