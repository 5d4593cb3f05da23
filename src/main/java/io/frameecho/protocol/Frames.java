package io.frameecho.protocol;

import io.netty.buffer.ByteBuf;
import io.vertx.core.buffer.Buffer;

/**
 * frame-echo's own wire format ({@link LengthField#DEFAULT}): a 4-byte little-endian unsigned length, then the
 * payload. Other forms read and write their headers through their {@link LengthField}.
 */
public final class Frames {

  /** Bytes in a frame header. */
  public static final int HEADER_SIZE = 4;

  /** The largest payload: with its header a frame must fit one buffer; a larger {@code maxFrameSize} parses as this. */
  public static final int LARGEST_PAYLOAD = Integer.MAX_VALUE - HEADER_SIZE;

  /** The default {@code maxFrameSize} (32 MiB). */
  public static final int DEFAULT_MAX_FRAME_SIZE = 32 << 20;

  private Frames() {
  }

  /** The payload length announced by the header at {@code index}, unsigned so that no length reads as negative. */
  public static long readLength(ByteBuf bytes, int index) {
    return bytes.getUnsignedIntLE(index);
  }

  /** Writes a header announcing {@code payloadLength} bytes at the writer index of {@code out}. */
  public static ByteBuf writeHeader(ByteBuf out, int payloadLength) {
    return out.writeIntLE(payloadLength);
  }

  /** A new header announcing {@code payloadLength} bytes. */
  public static Buffer header(int payloadLength) {
    return Buffer.buffer(HEADER_SIZE).appendIntLE(payloadLength);
  }

  /** The payload of a whole {@code frame} (header included), copied out; {@code frame} is released. */
  public static Buffer payload(ByteBuf frame) {
    try {
      byte[] payload = new byte[frame.readableBytes() - HEADER_SIZE];
      frame.getBytes(frame.readerIndex() + HEADER_SIZE, payload);
      return Buffer.buffer(payload);
    } finally {
      frame.release();
    }
  }

  /** A whole frame (header and a copy of the payload) in one buffer. */
  public static Buffer frame(Buffer payload) {
    return Buffer.buffer(HEADER_SIZE + payload.length()).appendIntLE(payload.length()).appendBuffer(payload);
  }
}
