package io.frameecho.protocol;

/** A length field announced fewer bytes than its (negative) adjustment takes away. */
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
