package io.frameecho.protocol;

import io.netty.buffer.ByteBuf;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;

import java.nio.ByteOrder;
import java.util.List;

/**
 * How a frame announces its length, with the parameters of Netty's {@code LengthFieldBasedFrameDecoder}:
 * {@code [offset bytes][length field: 1, 2, 3, 4 or 8 bytes][body]}, body length = the field's unsigned value +
 * {@code lengthAdjustment}. Unlike Netty's decoder, the maximum ({@code maxFrameSize}) bounds the body, a header over
 * it ends the stream, and the header is stripped whole or not at all. {@link #DEFAULT} is frame-echo's protocol (a
 * 4-byte little-endian unsigned length, then the body); every form reads and writes its headers here. Immutable; the
 * constructor and each {@code with…} check their values and name the wrong key.
 *
 * @param lengthFieldOffset bytes before the length field, 0 to {@link #MAX_OFFSET}
 * @param lengthFieldLength the length field's size: 1, 2, 3, 4 or 8 bytes
 * @param byteOrder the length field's byte order
 * @param lengthAdjustment added to the field's value to give the body's length: {@code -headerSize()} when the length
 *                         counts the header
 * @param stripHeader whether a frame is delivered as its body (true) or whole, header included (false)
 */
public record LengthField(int lengthFieldOffset, int lengthFieldLength, ByteOrder byteOrder, int lengthAdjustment,
                          boolean stripHeader) {

  /** The most bytes before the length field, since a header split across reads is kept whole per connection. */
  public static final int MAX_OFFSET = 1024;

  /** The default {@code maxFrameSize} (32 MiB) of frame-echo's server and client. */
  public static final int DEFAULT_MAX_FRAME_SIZE = 32 << 20;

  /** frame-echo's protocol: 4 bytes, little-endian, the body's length, stripped on delivery. */
  public static final LengthField DEFAULT = new LengthField(0, 4, ByteOrder.LITTLE_ENDIAN, 0, true);

  private static final List<String> KEYS = List.of("lengthFieldOffset", "lengthFieldLength", "byteOrder", "lengthAdjustment",
    "stripHeader");

  /**
   * A form, checked.
   *
   * @throws IllegalArgumentException naming the key whose value is out of range
   */
  public LengthField {
    if (lengthFieldLength != 1 && lengthFieldLength != 2 && lengthFieldLength != 3 && lengthFieldLength != 4
      && lengthFieldLength != 8) {
      throw new IllegalArgumentException("lengthFieldLength: " + lengthFieldLength + " must be 1, 2, 3, 4 or 8 (bytes)");
    }
    if (lengthFieldOffset < 0 || lengthFieldOffset > MAX_OFFSET) {
      throw new IllegalArgumentException("lengthFieldOffset: " + lengthFieldOffset + " must be 0 to " + MAX_OFFSET + " (bytes)");
    }
    if (byteOrder == null) {
      throw new IllegalArgumentException("byteOrder: must be BIG_ENDIAN or LITTLE_ENDIAN");
    }
    if (lengthAdjustment < 0 && maxFieldValue(lengthFieldLength) < -(long) lengthAdjustment) {
      throw new IllegalArgumentException("lengthAdjustment: " + lengthAdjustment + " leaves no frame that a "
        + lengthFieldLength + "-byte length field can announce (its largest value is " + maxFieldValue(lengthFieldLength) + ")");
    }
  }

  /** A length field of {@code lengthFieldLength} bytes in {@code byteOrder} at the frame's start, announcing the body. */
  public static LengthField of(int lengthFieldLength, ByteOrder byteOrder) {
    return new LengthField(0, lengthFieldLength, byteOrder, 0, true);
  }

  /**
   * Reads the JSON form; an absent key keeps {@link #DEFAULT}'s value.
   *
   * @param keyPrefix put before each key named in an error ({@code "framing."}), or {@code ""}
   * @throws IllegalArgumentException naming the key, on an unknown key, a value of the wrong type or out of range
   */
  public static LengthField fromJson(JsonObject json, String keyPrefix) {
    for (String key : json.fieldNames()) {
      if (!KEYS.contains(key)) {
        String quoted = io.vertx.core.json.Json.encode(key);
        // Escaped so that a line break in a key keeps the message on one line.
        throw new IllegalArgumentException("unknown configuration key '" + keyPrefix + quoted.substring(1, quoted.length() - 1)
          + "'; known keys: "
          + String.join(", ", KEYS.stream().map(k -> keyPrefix + k).toList()));
      }
    }
    try {
      return new LengthField(
        integer(json, "lengthFieldOffset", DEFAULT.lengthFieldOffset),
        integer(json, "lengthFieldLength", DEFAULT.lengthFieldLength),
        byteOrder(json.getValue("byteOrder", DEFAULT.byteOrder.toString())),
        integer(json, "lengthAdjustment", DEFAULT.lengthAdjustment),
        bool(json, "stripHeader", DEFAULT.stripHeader));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(keyPrefix + e.getMessage(), e);
    }
  }

  private static int integer(JsonObject json, String key, int absent) {
    Object value = json.getValue(key);
    if (value == null && !json.containsKey(key)) {
      return absent;
    }
    if ((value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte)
      && ((Number) value).longValue() == ((Number) value).intValue()) {
      return ((Number) value).intValue();
    }
    throw new IllegalArgumentException(key + ": expected an integer but got " + describe(value));
  }

  private static boolean bool(JsonObject json, String key, boolean absent) {
    Object value = json.getValue(key);
    if (value == null && !json.containsKey(key)) {
      return absent;
    }
    if (value instanceof Boolean b) {
      return b;
    }
    throw new IllegalArgumentException(key + ": expected true or false but got " + describe(value));
  }

  private static ByteOrder byteOrder(Object value) {
    if ("BIG_ENDIAN".equals(value)) {
      return ByteOrder.BIG_ENDIAN;
    }
    if ("LITTLE_ENDIAN".equals(value)) {
      return ByteOrder.LITTLE_ENDIAN;
    }
    throw new IllegalArgumentException("byteOrder: expected \"BIG_ENDIAN\" or \"LITTLE_ENDIAN\" but got " + describe(value));
  }

  private static String describe(Object value) {
    return value instanceof String s ? io.vertx.core.json.Json.encode(s) : String.valueOf(value);
  }

  /** The JSON form, every key given. */
  public JsonObject toJson() {
    return new JsonObject().put("lengthFieldOffset", lengthFieldOffset).put("lengthFieldLength", lengthFieldLength)
      .put("byteOrder", byteOrder.toString()).put("lengthAdjustment", lengthAdjustment).put("stripHeader", stripHeader);
  }

  /** This form with {@code lengthFieldOffset} bytes before the length field. */
  public LengthField withLengthFieldOffset(int lengthFieldOffset) {
    return new LengthField(lengthFieldOffset, lengthFieldLength, byteOrder, lengthAdjustment, stripHeader);
  }

  /** This form with a length field of {@code lengthFieldLength} bytes. */
  public LengthField withLengthFieldLength(int lengthFieldLength) {
    return new LengthField(lengthFieldOffset, lengthFieldLength, byteOrder, lengthAdjustment, stripHeader);
  }

  /** This form with the length field in {@code byteOrder}. */
  public LengthField withByteOrder(ByteOrder byteOrder) {
    return new LengthField(lengthFieldOffset, lengthFieldLength, byteOrder, lengthAdjustment, stripHeader);
  }

  /** This form with {@code lengthAdjustment} added to the field's value to give the body's length. */
  public LengthField withLengthAdjustment(int lengthAdjustment) {
    return new LengthField(lengthFieldOffset, lengthFieldLength, byteOrder, lengthAdjustment, stripHeader);
  }

  /** This form delivering a frame as its body ({@code stripHeader} true) or whole. */
  public LengthField withStripHeader(boolean stripHeader) {
    return new LengthField(lengthFieldOffset, lengthFieldLength, byteOrder, lengthAdjustment, stripHeader);
  }

  /** Bytes before the body: the offset and the length field. */
  public int headerSize() {
    return lengthFieldOffset + lengthFieldLength;
  }

  /** Where a delivered message starts in its frame: after the header when it is stripped, else at 0. */
  public int messageOffset() {
    return stripHeader ? headerSize() : 0;
  }

  /** The largest body a frame can have here: with its header it must fit one buffer, whose size is an int. */
  public int largestBody() {
    return Integer.MAX_VALUE - headerSize();
  }

  /** True for frame-echo's own form. */
  public boolean isDefault() {
    return equals(DEFAULT);
  }

  /**
   * The unsigned value of the length field of the frame at {@code frameStart}; an 8-byte value past
   * {@link Long#MAX_VALUE} reads as {@link Long#MAX_VALUE}, too large either way.
   */
  public long readLength(ByteBuf bytes, int frameStart) {
    int i = frameStart + lengthFieldOffset;
    boolean bigEndian = byteOrder == ByteOrder.BIG_ENDIAN;
    switch (lengthFieldLength) {
      case 1:
        return bytes.getUnsignedByte(i);
      case 2:
        return bigEndian ? bytes.getUnsignedShort(i) : bytes.getUnsignedShortLE(i);
      case 3:
        return bigEndian ? bytes.getUnsignedMedium(i) : bytes.getUnsignedMediumLE(i);
      case 4:
        return bigEndian ? bytes.getUnsignedInt(i) : bytes.getUnsignedIntLE(i);
      default:
        long value = bigEndian ? bytes.getLong(i) : bytes.getLongLE(i);
        return value < 0 ? Long.MAX_VALUE : value;
    }
  }

  /** The error for a field {@code value} whose body length is not within 0 and {@code maxBody}. */
  FramingException refusal(long value, int maxBody) {
    long body = value > Long.MAX_VALUE - Math.max(0, lengthAdjustment) ? Long.MAX_VALUE : value + lengthAdjustment;
    if (body < 0) {
      return new FrameTooShortException(value, this);
    }
    return new FrameTooLargeException(body, maxBody);
  }

  /**
   * The frame a parser of this form delivers as {@code message}.
   *
   * @throws IllegalArgumentException when the length does not fit the field, or a kept header is missing
   */
  public Buffer frame(Buffer message) {
    return header(message).appendBuffer(body(message));
  }

  /**
   * What goes before {@link #body(Buffer) body(m)} on the wire, so the two make {@link #frame(Buffer) frame(m)} without
   * copying the message.
   */
  public Buffer header(Buffer message) {
    Buffer header = Buffer.buffer(headerSize());
    if (stripHeader) {
      return header.appendBytes(new byte[lengthFieldOffset]).appendBytes(field(fieldValue(message.length())));
    }
    if (message.length() < headerSize()) {
      throw new IllegalArgumentException("a message of " + message.length() + " bytes has no room for its " + headerSize()
        + "-byte header, which it includes (stripHeader false)");
    }
    return header.appendBuffer(message, 0, lengthFieldOffset).appendBytes(field(fieldValue(message.length() - headerSize())));
  }

  /** The part of {@code message} that follows {@link #header(Buffer)} on the wire (a slice, not a copy). */
  public Buffer body(Buffer message) {
    return stripHeader ? message : message.slice(headerSize(), message.length());
  }

  /** Writes a header announcing a body of {@code bodyLength} bytes at the writer index of {@code out}. */
  public ByteBuf writeHeader(ByteBuf out, int bodyLength) {
    return out.writeZero(lengthFieldOffset).writeBytes(field(fieldValue(bodyLength)));
  }

  /** The message a whole {@code frame} delivers (its body, or all of it), copied out; {@code frame} is released. */
  public Buffer message(ByteBuf frame) {
    try {
      int offset = messageOffset();
      byte[] message = new byte[frame.readableBytes() - offset];
      frame.getBytes(frame.readerIndex() + offset, message);
      return Buffer.buffer(message);
    } finally {
      frame.release();
    }
  }

  /** Whether a message of {@code length} bytes can be framed in this form. */
  public boolean fits(int length) {
    long value = (long) (stripHeader ? length : length - headerSize()) - lengthAdjustment;
    return (stripHeader || length >= headerSize()) && value >= 0 && value <= maxFieldValue(lengthFieldLength);
  }

  /** The field's value for a body of {@code bodyLength} bytes; refused when the field cannot hold it. */
  private long fieldValue(int bodyLength) {
    long value = (long) bodyLength - lengthAdjustment;
    if (value < 0 || value > maxFieldValue(lengthFieldLength)) {
      throw new IllegalArgumentException("a body of " + bodyLength + " bytes cannot be announced by a " + lengthFieldLength
        + "-byte length field with lengthAdjustment " + lengthAdjustment);
    }
    return value;
  }

  private static long maxFieldValue(int lengthFieldLength) {
    return lengthFieldLength == 8 ? Long.MAX_VALUE : (1L << (8 * lengthFieldLength)) - 1;
  }

  /** The length field's bytes announcing {@code value}, the most significant first when big-endian. */
  private byte[] field(long value) {
    byte[] field = new byte[lengthFieldLength];
    for (int i = 0; i < lengthFieldLength; i++) {
      field[byteOrder == ByteOrder.BIG_ENDIAN ? lengthFieldLength - 1 - i : i] = (byte) (value >>> (8 * i));
    }
    return field;
  }

  /** The JSON form, for logs. */
  @Override
  public String toString() {
    return toJson().encode();
  }
}
