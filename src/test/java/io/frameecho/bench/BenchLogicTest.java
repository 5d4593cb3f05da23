package io.frameecho.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BenchLogicTest {

  @Test
  void sizesParseWithUnitsAndRanges() {
    assertEquals(16, SizeRange.parse("16").min());
    assertEquals(4096, SizeRange.parse("4KiB").max());
    assertEquals(4096, SizeRange.parse("4k").max());
    assertEquals(32 << 20, SizeRange.parse("32MiB").min());
    SizeRange range = SizeRange.parse("16-1KiB");
    assertEquals(16, range.min());
    assertEquals(1024, range.max());
    assertFalse(range.isFixed());
    assertTrue(SizeRange.parse("0").isFixed());
  }

  @Test
  void badSizesSayWhatIsWrong() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> SizeRange.parse("abc")).getMessage().contains("is not a size"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> SizeRange.parse("10-5")).getMessage().contains("maximum is below the minimum"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> SizeRange.parse("3000MiB")).getMessage().contains("2 GiB"));
  }

  @Test
  void randomSizesStayInTheirRangeAndCoverIt() {
    SizeRange range = SizeRange.parse("10-13");
    SplittableRandom random = new SplittableRandom(1);
    boolean[] seen = new boolean[4];
    for (int i = 0; i < 1000; i++) {
      int size = range.next(random);
      assertTrue(size >= 10 && size <= 13, "size " + size);
      seen[size - 10] = true;
    }
    assertTrue(seen[0] && seen[1] && seen[2] && seen[3]);
  }

  @Test
  void rateScheduleSpacesRequestsEvenlyFromTheStart() {
    RateSchedule schedule = new RateSchedule(1_000, 4);
    assertEquals(250_000_000, schedule.intervalNanos());
    assertEquals(1_000, schedule.intendedNanos(0));
    assertEquals(1_000 + 3 * 250_000_000L, schedule.intendedNanos(3));
    assertThrows(IllegalArgumentException.class, () -> new RateSchedule(0, 0));
  }

  @Test
  void payloadsDifferBetweenRequestsAndConnectionsAndVerifyInPieces() {
    ByteBuf a = Unpooled.buffer();
    ByteBuf b = Unpooled.buffer();
    ByteBuf c = Unpooled.buffer();
    PayloadPattern.write(a, PayloadPattern.seed(0, 41), 64);
    PayloadPattern.write(b, PayloadPattern.seed(0, 42), 64);
    PayloadPattern.write(c, PayloadPattern.seed(1, 41), 64);
    assertNotEquals(a, b);
    assertNotEquals(a, c);
    long seed = PayloadPattern.seed(0, 41);
    assertTrue(PayloadPattern.matches(a, seed, 0, 64));
    assertFalse(PayloadPattern.matches(b, seed, 0, 64));
    // As bytes arrive in chunks: the second half checked from offset 32.
    a.skipBytes(32);
    assertTrue(PayloadPattern.matches(a, seed, 32, 32));
    assertFalse(PayloadPattern.matches(a, seed, 31, 32));
  }

  @Test
  void settingsRefuseNonsenseNamingTheOption() {
    SizeRange s = SizeRange.parse("16");
    assertTrue(assertThrows(IllegalArgumentException.class,
      () -> new BenchSettings("h", 1, 0, 1, s, 1, 0, 0, false, 0, 1, false, null, null, false)).getMessage().startsWith("--connections"));
    assertTrue(assertThrows(IllegalArgumentException.class,
      () -> new BenchSettings("h", 1, 1, 0, s, 1, 0, 0, false, 0, 1, false, null, null, false)).getMessage().startsWith("--pipeline"));
    assertTrue(assertThrows(IllegalArgumentException.class,
      () -> new BenchSettings("h", 70000, 1, 1, s, 1, 0, 0, false, 0, 1, false, null, null, false)).getMessage().startsWith("--port"));
    assertTrue(assertThrows(IllegalArgumentException.class,
      () -> new BenchSettings("h", 1, 1, 1, s, 3, 0, 5, false, 0, 1, false, null, null, false)).getMessage().startsWith("--warmup"));
    assertTrue(assertThrows(IllegalArgumentException.class,
      () -> new BenchSettings("h", 1, 1, 1, s, 1, 0, 0, true, 0, 1, true, null, null, false)).getMessage().startsWith("--idle"));
    assertTrue(assertThrows(IllegalArgumentException.class,
      () -> new BenchSettings("h", 1, 1, 2, s, 1, 0, 0, false, 0, 1, false, null, null, true)).getMessage().startsWith("--churn"));
    assertTrue(assertThrows(IllegalArgumentException.class,
      () -> new BenchSettings("h", 1, 1, 1, s, 1, 0, 0, false, 100, 1, false, null, null, true)).getMessage().startsWith("--churn"));
    assertEquals("h:1 churn c=32 16 B", new BenchSettings("h", 1, 32, 1, s, 1, 0, 0, false, 0, 1, false, null, null, true).describe());
  }

  /** Bytes in a buffer that needs no release (a wrapped array). */
  private static ByteBuf bytes(int... values) {
    byte[] array = new byte[values.length];
    for (int i = 0; i < values.length; i++) {
      array[i] = (byte) values[i];
    }
    return Unpooled.wrappedBuffer(array);
  }

  /** A frame of {@code length} pattern bytes, in a buffer that needs no release. */
  private static ByteBuf frame(int length, long seed) {
    ByteBuf built = Unpooled.buffer().writeIntLE(length);
    PayloadPattern.write(built, seed, length);
    try {
      return Unpooled.wrappedBuffer(io.netty.buffer.ByteBufUtil.getBytes(built));
    } finally {
      built.release();
    }
  }

  /** A churn connection's one echo: its header and payload in reads of any size, the payload checked. */
  @Test
  void singleEchoFollowsAFrameAcrossReadsOfAnySize() {
    long seed = PayloadPattern.seed(3, 7);
    ByteBuf frame = frame(5, seed);
    // Byte by byte: waiting until the ninth byte, which completes it.
    SingleEcho echo = new SingleEcho(5, seed, true);
    for (int i = 0; i < 8; i++) {
      assertEquals(SingleEcho.State.WAITING, echo.read(frame.readSlice(1)));
    }
    assertEquals(SingleEcho.State.ECHOED, echo.read(frame.readSlice(1)));
    // All at once, and split inside the header.
    frame.readerIndex(0);
    assertEquals(SingleEcho.State.ECHOED, new SingleEcho(5, seed, true).read(frame.duplicate()));
    SingleEcho split = new SingleEcho(5, seed, true);
    assertEquals(SingleEcho.State.WAITING, split.read(frame.slice(0, 3)));
    assertEquals(SingleEcho.State.ECHOED, split.read(frame.slice(3, 6)));
    // An empty frame is echoed by its header alone.
    assertEquals(SingleEcho.State.ECHOED, new SingleEcho(0, seed, true).read(bytes(0, 0, 0, 0)));
  }

  @Test
  void singleEchoCatchesWrongLengthsWrongBytesAndBytesAfterIt() {
    long seed = PayloadPattern.seed(0, 0);
    // A header announcing 6 for 5 sent, and one past 2 GiB read as the unsigned value it is.
    SingleEcho longer = new SingleEcho(5, seed, false);
    assertEquals(SingleEcho.State.WRONG_LENGTH, longer.read(bytes(6, 0, 0, 0, 1, 2)));
    assertEquals(6, longer.announcedLength());
    SingleEcho huge = new SingleEcho(5, seed, false);
    assertEquals(SingleEcho.State.WRONG_LENGTH, huge.read(bytes(0xff, 0xff, 0xff, 0xff)));
    assertEquals(0xffffffffL, huge.announcedLength());
    // The right length, one byte flipped: a mismatch with verify, an echo without.
    ByteBuf frame = frame(4, seed);
    frame.setByte(6, ~frame.getByte(6));
    assertEquals(SingleEcho.State.MISMATCH, new SingleEcho(4, seed, true).read(frame.duplicate()));
    assertEquals(SingleEcho.State.ECHOED, new SingleEcho(4, seed, false).read(frame.duplicate()));
    // Bytes after the echo, in the same read or a later one: an answer to no request.
    ByteBuf twice = bytes(0, 0, 0, 0, 0, 0, 0, 0);
    assertEquals(SingleEcho.State.TOO_MUCH, new SingleEcho(0, seed, false).read(twice));
    assertFalse(twice.isReadable(), "consumed");
    SingleEcho later = new SingleEcho(0, seed, false);
    assertEquals(SingleEcho.State.ECHOED, later.read(bytes(0, 0, 0, 0)));
    assertEquals(SingleEcho.State.TOO_MUCH, later.read(bytes(9)));
  }
}
