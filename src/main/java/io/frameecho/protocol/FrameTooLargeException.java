package io.frameecho.protocol;

/**
 * A frame header announced more payload bytes than the configured maximum.
 * <p>
 * This is a protocol error: the stream cannot be resynchronised, so the connection must end.
 */
public final class FrameTooLargeException extends FramingException {

  private final long length;
  private final int maxFrameSize;

  public FrameTooLargeException(long length, int maxFrameSize) {
    super("frame length " + length + " exceeds maxFrameSize " + maxFrameSize);
    this.length = length;
    this.maxFrameSize = maxFrameSize;
  }

  /**
   * The body length the header announced: the field's unsigned value plus the form's {@code lengthAdjustment} (0 by
   * default), so with frame-echo's own form the unsigned 32-bit value it is on the wire.
   */
  public long length() {
    return length;
  }

  public int maxFrameSize() {
    return maxFrameSize;
  }
}
