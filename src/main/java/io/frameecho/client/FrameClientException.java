package io.frameecho.client;

/** A request could not be answered: the connection dropped or the server broke the protocol. */
public final class FrameClientException extends RuntimeException {

  public FrameClientException(String message) {
    super(message);
  }

  public FrameClientException(String message, Throwable cause) {
    super(message, cause);
  }
}
