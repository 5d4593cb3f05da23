package io.frameecho.protocol;

import io.vertx.core.buffer.Buffer;

/** Constants and encoding of the wire format: a 4-byte little-endian unsigned length, then the payload. */
public final class Frames {

  /** Bytes in a frame header. */
  public static final int HEADER_SIZE = 4;

  /** The book's {@code k_max_msg}: 32 MiB. */
  public static final int DEFAULT_MAX_FRAME_SIZE = 32 << 20;

  private Frames() {
  }

  /** A new header announcing {@code payloadLength} bytes. */
  public static Buffer header(int payloadLength) {
    return Buffer.buffer(HEADER_SIZE).appendIntLE(payloadLength);
  }

  /** A whole frame (header and a copy of the payload) in one buffer. */
  public static Buffer frame(Buffer payload) {
    return Buffer.buffer(HEADER_SIZE + payload.length()).appendIntLE(payload.length()).appendBuffer(payload);
  }
}
