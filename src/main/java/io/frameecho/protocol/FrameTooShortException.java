package io.frameecho.protocol;

/**
 * A length field announced fewer bytes than its adjustment takes away: with a length that counts the header
 * ({@code lengthAdjustment} negative), a value smaller than the header.
 */
public final class FrameTooShortException extends FramingException {

  private final long length;

  FrameTooShortException(long length, LengthField form) {
    super("frame length " + length + " is shorter than lengthAdjustment " + form.lengthAdjustment() + " allows (a "
      + form.headerSize() + "-byte header): no body can follow");
    this.length = length;
  }

  /** The value of the length field. */
  public long length() {
    return length;
  }
}
