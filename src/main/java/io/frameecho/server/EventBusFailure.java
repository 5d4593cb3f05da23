package io.frameecho.server;

/**
 * Why the event-bus handler failed an answer (the client's connection then closes after the earlier responses);
 * operators see it in the {@code cause} tag of the failed-answers meter.
 */
public enum EventBusFailure {
  /** No reply within {@code handler.timeoutMs}: a slow consumer, or one on a node that went or froze. */
  TIMEOUT("timeout"),
  /** Nobody consumes the address (Vert.x's {@code NO_HANDLERS}). */
  NO_CONSUMER("no_consumer"),
  /** The consumer replied with a failure ({@code message.fail}). */
  CONSUMER_FAILED("consumer_failed"),
  /** The reply's body is not a {@code Buffer}. */
  NOT_A_BUFFER("not_a_buffer"),
  /** Anything else the event bus reported (an error while sending, say). */
  OTHER("other");

  private final String tag;

  EventBusFailure(String tag) {
    this.tag = tag;
  }

  /** The meter's {@code cause} tag. */
  public String tag() {
    return tag;
  }
}
