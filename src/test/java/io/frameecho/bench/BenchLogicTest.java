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
      () -> new BenchSettings("h", 1, 0, 1, s, 1, 0, 0, false, 0, 1, false, null, null)).getMessage().startsWith("--connections"));
    assertTrue(assertThrows(IllegalArgumentException.class,
      () -> new BenchSettings("h", 1, 1, 0, s, 1, 0, 0, false, 0, 1, false, null, null)).getMessage().startsWith("--pipeline"));
    assertTrue(assertThrows(IllegalArgumentException.class,
      () -> new BenchSettings("h", 70000, 1, 1, s, 1, 0, 0, false, 0, 1, false, null, null)).getMessage().startsWith("--port"));
    assertTrue(assertThrows(IllegalArgumentException.class,
      () -> new BenchSettings("h", 1, 1, 1, s, 3, 0, 5, false, 0, 1, false, null, null)).getMessage().startsWith("--warmup"));
    assertTrue(assertThrows(IllegalArgumentException.class,
      () -> new BenchSettings("h", 1, 1, 1, s, 1, 0, 0, true, 0, 1, true, null, null)).getMessage().startsWith("--idle"));
  }
}
