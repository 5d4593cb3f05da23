package io.frameecho.protocol;

/**
 * A frame header the parser refuses: the stream cannot be resynchronised, so the connection must end.
 */
public abstract sealed class FramingException extends RuntimeException permits FrameTooLargeException, FrameTooShortException {

  FramingException(String message) {
    super(message, null, false, false);
  }
}
