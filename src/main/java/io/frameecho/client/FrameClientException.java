package io.frameecho.client;

/** A request could not be answered: the connection dropped or the server broke the protocol. */
public final class FrameClientException extends RuntimeException {

  /** An exception with {@code message}. */
  public FrameClientException(String message) {
    super(message);
  }

  /** An exception with {@code message} and {@code cause}. */
  public FrameClientException(String message, Throwable cause) {
    super(message, cause);
  }
}
