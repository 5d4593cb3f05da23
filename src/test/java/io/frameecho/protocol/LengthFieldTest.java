package io.frameecho.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The header forms: each one's frames parse back to what was written, whatever the reads' cuts; the limits hold for
 * every form; a bad description fails at construction naming its key.
 */
class LengthFieldTest {

  /** A form per kind the protocols in use need (Netty's decoder's examples among them). */
  static Stream<LengthField> forms() {
    return Stream.of(
      LengthField.DEFAULT,
      LengthField.of(1, ByteOrder.BIG_ENDIAN),
      LengthField.of(2, ByteOrder.BIG_ENDIAN),
      LengthField.of(2, ByteOrder.LITTLE_ENDIAN),
      LengthField.of(3, ByteOrder.BIG_ENDIAN),
      LengthField.of(3, ByteOrder.LITTLE_ENDIAN),
      LengthField.of(4, ByteOrder.BIG_ENDIAN),
      LengthField.of(8, ByteOrder.BIG_ENDIAN),
      LengthField.of(8, ByteOrder.LITTLE_ENDIAN),
      // The length counts the header.
      LengthField.of(2, ByteOrder.BIG_ENDIAN).withLengthAdjustment(-2),
      LengthField.of(4, ByteOrder.BIG_ENDIAN).withLengthAdjustment(-4),
      // Two bytes before the field (a type), header kept.
      LengthField.of(3, ByteOrder.BIG_ENDIAN).withLengthFieldOffset(2).withStripHeader(false),
      // HDR1 LEN HDR2: one byte before, the length counts the whole frame.
      LengthField.of(2, ByteOrder.BIG_ENDIAN).withLengthFieldOffset(1).withLengthAdjustment(-3),
      // A header kept, the length counting it.
      LengthField.DEFAULT.withLengthAdjustment(-4).withStripHeader(false));
  }

  private static List<Buffer> messages(LengthField form) {
    List<Buffer> messages = new ArrayList<>();
    for (String body : new String[] {"hello", "", "x", "", "", "a longer message than the others"}) {
      Buffer b = Buffer.buffer(body);
      if (!form.stripHeader()) {
        // A kept header is part of the message: its bytes before the field are the application's.
        Buffer withHeader = Buffer.buffer();
        for (int i = 0; i < form.headerSize(); i++) {
          withHeader.appendByte((byte) (0x70 + i));
        }
        // Its length field as written: what the parser delivers.
        b = form.frame(withHeader.appendBuffer(b));
      }
      messages.add(b);
    }
    return messages;
  }

  private static Buffer stream(LengthField form, List<Buffer> messages) {
    Buffer stream = Buffer.buffer();
    for (Buffer m : messages) {
      stream.appendBuffer(form.frame(m));
    }
    return stream;
  }

  private static List<Object> parse(LengthField form, int maxFrameSize, Buffer stream, int... cuts) {
    List<Object> events = new ArrayList<>();
    FrameParser parser = FrameParser.standalone(form, maxFrameSize, new FrameParser.Listener() {
      @Override
      public void frame(ByteBuf frame) {
        events.add(form.message(frame));
      }

      @Override
      public void failed(Throwable error) {
        events.add(error);
      }
    });
    int at = 0;
    for (int cut : cuts) {
      parser.handle(Unpooled.wrappedBuffer(stream.getBytes(at, cut)));
      at = cut;
    }
    parser.handle(Unpooled.wrappedBuffer(stream.getBytes(at, stream.length())));
    if (events.stream().noneMatch(e -> e instanceof Throwable)) {
      assertTrue(parser.atFrameBoundary(), "a whole stream ends at a frame boundary");
    }
    return events;
  }

  @ParameterizedTest
  @MethodSource("forms")
  void framesWrittenParseBackWhereverTheReadsAreCut(LengthField form) {
    List<Buffer> messages = messages(form);
    Buffer stream = stream(form, messages);
    List<Object> expected = new ArrayList<>(messages);
    assertEquals(expected, parse(form, 1024, stream), "in one read");
    for (int cut = 0; cut <= stream.length(); cut++) {
      assertEquals(expected, parse(form, 1024, stream, cut), "cut at " + cut);
    }
    int[] everyByte = new int[stream.length()];
    for (int i = 0; i < everyByte.length; i++) {
      everyByte[i] = i;
    }
    assertEquals(expected, parse(form, 1024, stream, everyByte), "a byte per read");
  }

  @ParameterizedTest
  @MethodSource("forms")
  void aBodyOverTheMaximumIsRefusedAtItsHeaderBeforeAnyBodyByte(LengthField form) {
    Buffer ok = form.frame(messages(form).get(0));
    Buffer big = form.header(form.stripHeader() ? Buffer.buffer(new byte[6]) : Buffer.buffer(new byte[form.headerSize() + 6]));
    Buffer stream = Buffer.buffer().appendBuffer(ok).appendBuffer(big);
    List<Object> events = parse(form, 5, stream);
    assertEquals(2, events.size(), events.toString());
    FrameTooLargeException e = assertInstanceOf(FrameTooLargeException.class, events.get(1));
    assertEquals(6, e.length());
    assertEquals(5, e.maxFrameSize());
  }

  @Test
  void aLengthShorterThanTheHeaderItCountsIsRefused() {
    LengthField form = LengthField.of(2, ByteOrder.BIG_ENDIAN).withLengthAdjustment(-2);
    List<Object> events = parse(form, 100, Buffer.buffer(new byte[] {0, 2, 0, 1, 'x'}), 1);
    assertEquals(Buffer.buffer(), events.get(0));
    FrameTooShortException e = assertInstanceOf(FrameTooShortException.class, events.get(1));
    assertEquals(1, e.length());
  }

  @Test
  void lengthsAreUnsignedForEveryFieldSize() {
    assertEquals(0xFFL, LengthField.of(1, ByteOrder.BIG_ENDIAN).readLength(Unpooled.wrappedBuffer(new byte[] {-1}), 0));
    assertEquals(0xFFFEL, LengthField.of(2, ByteOrder.BIG_ENDIAN).readLength(Unpooled.wrappedBuffer(new byte[] {-1, -2}), 0));
    assertEquals(0xFEFFL, LengthField.of(2, ByteOrder.LITTLE_ENDIAN).readLength(Unpooled.wrappedBuffer(new byte[] {-1, -2}), 0));
    assertEquals(0xFFFFFEL, LengthField.of(3, ByteOrder.BIG_ENDIAN).readLength(Unpooled.wrappedBuffer(new byte[] {-1, -1, -2}), 0));
    assertEquals(0xFFFFFFFFL, LengthField.DEFAULT.readLength(Unpooled.wrappedBuffer(new byte[] {-1, -1, -1, -1}), 0));
    // Past 2^63: too large either way, never negative.
    assertEquals(Long.MAX_VALUE, LengthField.of(8, ByteOrder.BIG_ENDIAN).readLength(Unpooled.wrappedBuffer(new byte[] {-1, 0, 0, 0, 0, 0, 0, 0}), 0));
    List<Object> events = parse(LengthField.of(8, ByteOrder.BIG_ENDIAN).withLengthAdjustment(5), 100,
      Buffer.buffer(new byte[] {-1, -1, -1, -1, -1, -1, -1, -1}));
    assertInstanceOf(FrameTooLargeException.class, events.get(0));
  }

  @Test
  void theDefaultIsFrameEchosOwnProtocol() {
    Buffer abc = Buffer.buffer("abc");
    assertEquals(LengthField.DEFAULT.frame(abc), LengthField.DEFAULT.frame(abc));
    assertEquals(Buffer.buffer().appendIntLE(3), LengthField.DEFAULT.header(abc));
    assertEquals(LengthField.DEFAULT, LengthField.fromJson(new JsonObject(), ""));
    assertEquals(new JsonObject("{\"lengthFieldOffset\":0,\"lengthFieldLength\":4,\"byteOrder\":\"LITTLE_ENDIAN\","
      + "\"lengthAdjustment\":0,\"stripHeader\":true}"), LengthField.DEFAULT.toJson());
    assertTrue(LengthField.DEFAULT.isDefault());
  }

  @ParameterizedTest
  @MethodSource("forms")
  void theJsonFormReadsBackTheSameForm(LengthField form) {
    assertEquals(form, LengthField.fromJson(form.toJson(), ""));
  }

  @Test
  void aKeptHeaderIsTheMessagesOwnWithItsLengthSet() {
    LengthField form = LengthField.of(2, ByteOrder.BIG_ENDIAN).withLengthFieldOffset(1).withStripHeader(false);
    Buffer frame = form.frame(Buffer.buffer(new byte[] {7, 0, 0, 'h', 'i'}));
    assertEquals(Buffer.buffer(new byte[] {7, 0, 2, 'h', 'i'}), frame);
    assertEquals(Buffer.buffer(new byte[] {7, 0, 2}), form.header(Buffer.buffer(new byte[] {7, 9, 9, 'h', 'i'})));
    assertThrows(IllegalArgumentException.class, () -> form.frame(Buffer.buffer(new byte[] {7, 0})));
  }

  @Test
  void aBodyTheFieldCannotAnnounceIsRefusedWhenWritten() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
      () -> LengthField.of(1, ByteOrder.BIG_ENDIAN).frame(Buffer.buffer(new byte[256])));
    assertTrue(e.getMessage().contains("1-byte length field"), e.getMessage());
  }

  @Test
  void aBadDescriptionFailsNamingItsKey() {
    assertMessage("lengthFieldLength: 5 must be 1, 2, 3, 4 or 8 (bytes)", () -> LengthField.of(5, ByteOrder.BIG_ENDIAN));
    assertMessage("lengthFieldOffset: -1 must be 0 to 1024 (bytes)", () -> LengthField.DEFAULT.withLengthFieldOffset(-1));
    assertMessage("framing.lengthFieldLength: expected an integer but got \"4\"",
      () -> LengthField.fromJson(new JsonObject().put("lengthFieldLength", "4"), "framing."));
    assertMessage("framing.byteOrder: expected \"BIG_ENDIAN\" or \"LITTLE_ENDIAN\" but got \"big\"",
      () -> LengthField.fromJson(new JsonObject().put("byteOrder", "big"), "framing."));
    assertMessage("framing.stripHeader: expected true or false but got 1",
      () -> LengthField.fromJson(new JsonObject().put("stripHeader", 1), "framing."));
    assertMessage("framing.lengthAdjustment: -256 leaves no frame that a 1-byte length field can announce (its largest value is 255)",
      () -> LengthField.fromJson(new JsonObject().put("lengthFieldLength", 1).put("lengthAdjustment", -256), "framing."));
    assertMessage("unknown configuration key 'framing.length'; known keys: framing.lengthFieldOffset, framing.lengthFieldLength, "
      + "framing.byteOrder, framing.lengthAdjustment, framing.stripHeader",
      () -> LengthField.fromJson(new JsonObject().put("length", 2), "framing."));
  }

  private static void assertMessage(String expected, org.junit.jupiter.api.function.Executable code) {
    assertEquals(expected, assertThrows(IllegalArgumentException.class, code).getMessage());
  }
}
