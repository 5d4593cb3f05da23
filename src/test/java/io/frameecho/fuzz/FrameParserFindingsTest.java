package io.frameecho.fuzz;

import io.frameecho.protocol.FrameParser;
import io.frameecho.protocol.FrameTooLargeException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What {@link FrameParserFuzzTest} found in {@link FrameParser}, as plain tests. */
class FrameParserFindingsTest {

  /**
   * Found by the fuzzer with {@code maxFrameSize} {@code Integer.MAX_VALUE - 1} (the configuration allows up to
   * {@code Integer.MAX_VALUE}) and the 4 bytes {@code fe ff ff 7f}: the header announces 2147483646 bytes, within
   * the maximum, and the frame size {@code HEADER_SIZE + bodyLength} overflows to -2147483646 in
   * {@code FrameParser.takeFrame}, which takes the frame for one that lies whole in the read and throws Netty's
   * {@code IllegalArgumentException: minimumReadableBytes : -2147483646} out of {@code handle}. Any header from
   * {@code Integer.MAX_VALUE - 3} up to the maximum did it. The parser now refuses such a header as too large: a
   * frame and its header must fit one buffer ({@code LengthField.DEFAULT.largestBody()}).
   */
  @Test
  void aHeaderNearTheLargestMaximumDoesNotOverflowTheFrameSize() {
    List<ByteBuf> frames = new ArrayList<>();
    List<Throwable> failures = new ArrayList<>();
    FrameParser parser = FrameParser.standalone(Integer.MAX_VALUE - 1, new FrameParser.Listener() {
      @Override
      public void frame(ByteBuf frame) {
        frames.add(frame);
      }

      @Override
      public void failed(Throwable error) {
        failures.add(error);
      }
    });
    try {
      assertDoesNotThrow(() -> parser.handle(Unpooled.wrappedBuffer(new byte[] {(byte) 0xfe, (byte) 0xff, (byte) 0xff, 0x7f})));
      assertTrue(frames.isEmpty(), "a frame of 2 GiB - 2 bytes from a header alone");
      assertEquals(1, failures.size());
      assertTrue(failures.get(0) instanceof FrameTooLargeException, "failed with " + failures);
      assertEquals(Integer.MAX_VALUE - 4, ((FrameTooLargeException) failures.get(0)).maxFrameSize());
      assertEquals(4, parser.bufferedBytes());
    } finally {
      parser.releaseBuffers();
      frames.forEach(ByteBuf::release);
    }
  }
}
