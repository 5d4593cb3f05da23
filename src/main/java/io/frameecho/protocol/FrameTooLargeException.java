package io.frameecho.protocol;

/**
 * A frame header announced more payload bytes than the configured maximum.
 * <p>
 * This is a protocol error: the stream cannot be resynchronised, so the connection must end.
 */
public final class FrameTooLargeException extends RuntimeException {

  private final long length;
  private final int maxFrameSize;

  public FrameTooLargeException(long length, int maxFrameSize) {
    super("frame length " + length + " exceeds maxFrameSize " + maxFrameSize, null, false, false);
    this.length = length;
    this.maxFrameSize = maxFrameSize;
  }

  /** The length the header announced, as the unsigned 32-bit value it is on the wire. */
  public long length() {
    return length;
  }

  public int maxFrameSize() {
    return maxFrameSize;
  }
}
