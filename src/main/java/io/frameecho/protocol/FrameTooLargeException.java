package io.frameecho.protocol;

/** A frame header announced more payload than the maximum: a protocol error that ends the connection. */
public final class FrameTooLargeException extends FramingException {

  private final long length;
  private final int maxFrameSize;

  public FrameTooLargeException(long length, int maxFrameSize) {
    super("frame length " + length + " exceeds maxFrameSize " + maxFrameSize);
    this.length = length;
    this.maxFrameSize = maxFrameSize;
  }

  /** The body length the header announced: the field's unsigned value plus the form's {@code lengthAdjustment}. */
  public long length() {
    return length;
  }

  public int maxFrameSize() {
    return maxFrameSize;
  }
}
