package io.frameecho.server.impl.connection;

import io.frameecho.protocol.LengthField;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.vertx.core.buffer.Buffer;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Bytes on the wire for the connection's tests, and reads as the server gets them. */
final class Wire {

  private Wire() {
  }

  /** A whole frame, header included, around {@code payload}. */
  static byte[] frame(String payload) {
    return LengthField.DEFAULT.frame(Buffer.buffer(payload)).getBytes();
  }

  /** A header alone, announcing {@code payloadLength} bytes. */
  static byte[] header(int payloadLength) {
    return Buffer.buffer().appendIntLE(payloadLength).getBytes();
  }

  static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    for (byte[] part : parts) {
      all.writeBytes(part);
    }
    return all.toByteArray();
  }

  /**
   * Reads from the allocator Vert.x 5 gives server channels, as a socket delivers them when Netty's leak
   * detector does not track them: the detector's wrapper (every buffer, under the tests' paranoid level) hides
   * the read from the slices the parser cuts, and {@link EchoWriter} then cannot join them (see
   * {@code EchoWriterTest#aReadTheLeakDetectorTracksStillGoesOutAsOneWrite}). The test keeps the tracked buffer
   * and its last reference, and releases it in {@link #assertReleased}, so that the detector sees it released.
   */
  static final class Reads {

    private final List<ByteBuf> tracked = new ArrayList<>();

    /** One read holding {@code parts} back to back; the receiver owns it and must release it. */
    ByteBuf read(byte[]... parts) {
      byte[] bytes = concat(parts);
      ByteBuf buffer = ByteBufAllocator.DEFAULT.directBuffer(bytes.length).writeBytes(bytes);
      tracked.add(buffer);
      ByteBuf read = buffer.unwrap() == null ? buffer : buffer.unwrap();
      return read.retain();
    }

    /** Every read was released by the code under test: only the test's own reference is left. */
    void assertReleased() {
      for (ByteBuf buffer : tracked) {
        assertEquals(1, buffer.refCnt(), "a read not released");
        buffer.release();
      }
      tracked.clear();
    }
  }
}
