package io.frameecho.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.streams.ReadStream;

import java.util.function.BooleanSupplier;

/**
 * Reassembles length-prefixed frames from a byte stream: the parsing half of the book's
 * {@code try_one_request}. The header's form is a {@link LengthField} (any length field of 1 to 8 bytes, either byte
 * order, after an offset, adjusted); by default frame-echo's own. A frame on the wire in that form, here the payload
 * "abc":
 * <pre>
 *   byte:    0    1    2    3    4    5    6
 *          +----+----+----+----+----+----+----+
 *          | 03 | 00 | 00 | 00 | 61 | 62 | 63 |
 *          +----+----+----+----+----+----+----+
 *          \_ length n = 3 ____/\_ n bytes ___/
 *            unsigned 32-bit,     of payload
 *            little-endian
 *            (least significant
 *             byte first)
 * </pre>
 * A state machine ({@link State}) over Netty buffers, with one place where a header is decided
 * ({@link #decideHeader}). A frame that lies whole in one read is handed over as a slice of that read,
 * without a copy; a frame that spans reads is gathered by a {@link PartialFrame}, in memory that grows
 * with the bytes that arrived, never with the length the header announces (a small frame in one buffer
 * of its size, a bigger one in pooled pieces; never a buffer doubling its way up). The length is checked
 * against {@code maxFrameSize} (as an unsigned value) before any body byte is gathered; a zero-length frame
 * is a header alone.
 * <p>
 * The parser owns the source's demand: {@link #pause()} and {@link #resume()} go through it, never to the
 * source directly, so bytes already received stop as well. It counts the bytes it has been given and
 * those it has delivered, which tells a clean end from a cut frame and when a frame has started. It knows
 * nothing of sockets; fed through {@link #handle(Buffer)} or {@link #handle(ByteBuf)} it works on raw
 * buffers, which is how it is unit-tested.
 * <p>
 * Stands where one might expect Vert.x's {@code RecordParser}, which copies every read into a buffer of its
 * own and every record out of it, and cannot express a zero-length record. {@link FrameStream} is this parser as a
 * Vert.x {@code Handler<Buffer>} and {@code ReadStream<Buffer>} of messages.
 * <p>
 * Not thread-safe: use it from one context, like the stream it reads.
 */
public final class FrameParser implements Handler<Buffer> {

  /**
   * What the parser tells its owner, in stream order: a frame, a failure, the end. Whatever else the owner
   * needs to know (bytes buffered, the size a header announced, whether a frame has started) it asks, with
   * {@link #bufferedBytes()}, {@link #announcedFrameSize()} and {@link #atFrameBoundary()}.
   */
  public interface Listener {

    /**
     * A complete frame, header included, as a Netty buffer the listener now owns and must release: a slice
     * of the read when the frame lay whole in it. {@link Frames#payload} copies the payload out.
     */
    void frame(ByteBuf frame);

    /**
     * A {@link FramingException} on a header it refuses ({@link FrameTooLargeException}, {@link FrameTooShortException};
     * the parser has stopped for good by then), or the source's own failure.
     */
    void failed(Throwable error);

    /** The source ended; {@link #atFrameBoundary()} tells a clean end from a cut frame. */
    default void ended() {
    }
  }

  /** Turns reading from the source off and on. */
  @FunctionalInterface
  public interface Demand {
    void reading(boolean on);
  }

  /**
   * Where the parser stands in the byte stream. Pausing is not a state of its own: the parser may be paused
   * in any of these (a listener pauses on a frame or on a body's announcement), and then resumes where it was.
   */
  enum State {
    /** Between frames: the next byte is the first of a header. */
    AT_BOUNDARY,
    /** A read ended inside a header: its first bytes wait in the {@link PartialFrame}. */
    READING_HEADER,
    /**
     * A whole header has been decided ({@link #decideHeader}): its length checked, its body announced. It lies
     * at the front of the unread bytes, or in the {@link PartialFrame} when it came across reads; the frame is
     * taken next, as a slice of the read that holds it all, or gathered.
     */
    HEADER_DECIDED,
    /** The frame spans reads: its bytes are gathered into the {@link PartialFrame} until it is whole. */
    READING_BODY,
    /** A header announced more than the maximum: nothing more is parsed, every byte given is dropped. Final. */
    FAILED
  }

  private final Demand demand;
  private final int maxFrameSize;
  private final Listener listener;
  /** The header's form, and what the per-frame path reads of it. */
  private final LengthField form;
  private final int headerSize;
  private final int lengthAdjustment;
  /** The length field is frame-echo's own (4 bytes, little-endian, at the frame's start): read here, without a switch. */
  private final boolean ownLengthField;
  /** The frame that spans reads, when there is one. */
  private final PartialFrame partial;

  private State state = State.AT_BOUNDARY;
  /** Payload length of the decided header, from {@link State#HEADER_DECIDED} until the frame is delivered. */
  private int bodyLength;
  private boolean paused;
  /** Bytes received while paused, not parsed yet; null when none. */
  private ByteBuf held;
  /** Bytes given to the parser, and bytes of the frames it has delivered. */
  private long received;
  private long delivered;
  /** Calls of {@link #releaseBuffers()}, so that a parse it interrupts holds nothing more. */
  private int releases;

  private FrameParser(Demand demand, LengthField form, int maxFrameSize, Listener listener) {
    if (maxFrameSize <= 0) {
      throw new IllegalArgumentException("maxFrameSize must be positive: " + maxFrameSize);
    }
    this.demand = demand;
    this.form = java.util.Objects.requireNonNull(form, "form");
    // A frame and its header must fit one buffer: above that a header is refused as too large.
    this.maxFrameSize = Math.min(maxFrameSize, form.largestBody());
    this.listener = listener;
    this.headerSize = form.headerSize();
    this.lengthAdjustment = form.lengthAdjustment();
    this.ownLengthField = form.lengthFieldOffset() == 0 && form.lengthFieldLength() == 4
      && form.byteOrder() == java.nio.ByteOrder.LITTLE_ENDIAN;
    this.partial = new PartialFrame(form);
  }

  /**
   * A parser reading {@code source}: it takes over the source's data, end and exception handlers and its
   * demand. At the source's end it releases what it holds.
   */
  public static FrameParser reading(ReadStream<Buffer> source, int maxFrameSize, Listener listener) {
    return reading(source, LengthField.DEFAULT, maxFrameSize, listener);
  }

  /** {@link #reading(ReadStream, int, Listener)} for frames of {@code form}; {@code maxFrameSize} bounds their bodies. */
  public static FrameParser reading(ReadStream<Buffer> source, LengthField form, int maxFrameSize, Listener listener) {
    FrameParser parser = new FrameParser(on -> {
      if (on) {
        source.resume();
      } else {
        source.pause();
      }
    }, form, maxFrameSize, listener);
    source.exceptionHandler(listener::failed);
    source.endHandler(v -> {
      listener.ended();
      parser.releaseBuffers();
    });
    source.handler(parser);
    return parser;
  }

  /**
   * A parser fed by the caller through {@link #handle(ByteBuf)} (for a source read as raw Netty buffers),
   * which turns the source's reading off and on through {@code demand}.
   */
  public static FrameParser controlling(Demand demand, int maxFrameSize, Listener listener) {
    return controlling(demand, LengthField.DEFAULT, maxFrameSize, listener);
  }

  /** {@link #controlling(Demand, int, Listener)} for frames of {@code form}. */
  public static FrameParser controlling(Demand demand, LengthField form, int maxFrameSize, Listener listener) {
    return new FrameParser(demand, form, maxFrameSize, listener);
  }

  /** A parser fed by hand. */
  public static FrameParser standalone(int maxFrameSize, Listener listener) {
    return standalone(LengthField.DEFAULT, maxFrameSize, listener);
  }

  /** A parser of frames of {@code form}, fed by hand. */
  public static FrameParser standalone(LengthField form, int maxFrameSize, Listener listener) {
    return new FrameParser(null, form, maxFrameSize, listener);
  }

  /** The form of the frames this parser reads. */
  public LengthField form() {
    return form;
  }

  /**
   * Tells the parser when memory is scarce (its owner's budget is filling): a frame spanning reads is then
   * gathered in pieces as large as each read, rather than as large as what has arrived of it (up to 1 MiB),
   * so that a connection paused mid-frame sets aside little beyond what it holds.
   */
  public FrameParser memoryScarce(BooleanSupplier scarce) {
    partial.memoryScarce = scarce;
    return this;
  }

  /**
   * Feeds bytes as they arrived, from a Vert.x buffer, copied (the caller keeps its buffer) into a pooled one: the
   * frames that span reads are then gathered in pooled memory too, as the server's are, rather than in direct memory
   * allocated afresh each time.
   */
  @Override
  public void handle(Buffer bytes) {
    int length = bytes.length();
    ByteBuf copy = PooledByteBufAllocator.DEFAULT.heapBuffer(length, length);
    bytes.getBytes(0, length, copy.array(), copy.arrayOffset());
    handle(copy.writerIndex(length));
  }

  /** Feeds bytes as they arrived; the parser takes ownership of {@code bytes} and releases it. */
  public void handle(ByteBuf bytes) {
    if (state == State.FAILED) {
      bytes.release();
      return;
    }
    received += bytes.readableBytes();
    if (paused || held != null) {
      hold(bytes);
    } else {
      parse(bytes);
    }
  }

  /** Parses {@code in} until it is used up, the parser pauses or fails; holds what is left; releases {@code in}. */
  private void parse(ByteBuf in) {
    int releasesBefore = releases;
    try {
      // A header decided at the end of a read goes on without another byte: it may end a zero-length frame.
      while (!paused && state != State.FAILED && (in.isReadable() || state == State.HEADER_DECIDED)) {
        switch (state) {
          case AT_BOUNDARY -> startFrame(in);
          case READING_HEADER -> readHeader(in);
          case HEADER_DECIDED -> takeFrame(in);
          case READING_BODY -> readBody(in);
          default -> throw new IllegalStateException(state.name());
        }
      }
      // Unless the owner released the parser's buffers meanwhile (it closed, from a frame's handling): then the
      // rest of this read belongs to a stream that is gone.
      if (in.isReadable() && state != State.FAILED && releases == releasesBefore) {
        hold(in.retainedSlice());
        in.skipBytes(in.readableBytes());
      }
    } finally {
      in.release();
    }
  }

  /** {@link State#AT_BOUNDARY}: a whole header is decided where it lies, in the read; a part of one is kept. */
  private void startFrame(ByteBuf in) {
    if (in.readableBytes() < headerSize) {
      partial.startHeader(in);
      state = State.READING_HEADER;
    } else {
      int start = in.readerIndex();
      decideHeader(ownLengthField ? in.getUnsignedIntLE(start) : form.readLength(in, start));
      if (state == State.HEADER_DECIDED && !paused) {
        // The common case, taken at once rather than on the loop's next turn: this is the per-frame path.
        takeFrame(in);
      }
    }
  }

  /** {@link State#READING_HEADER}: completes the header from {@code in}, then decides it. */
  private void readHeader(ByteBuf in) {
    if (partial.fillHeader(in)) {
      decideHeader(partial.headerLength());
    }
  }

  /**
   * The header decision, the one place it is taken wherever the header's bytes lie, on the length field's unsigned
   * value. A body length (the value plus the adjustment) below 0 or over the maximum (compared unsigned, before any
   * body byte is kept) fails the parser.
   */
  private void decideHeader(long length) {
    long body = length + lengthAdjustment;
    // Unsigned: a body the adjustment made negative is as refused as one over the maximum.
    if (Long.compareUnsigned(body, maxFrameSize) > 0) {
      fail(form.refusal(length, maxFrameSize));
      return;
    }
    bodyLength = (int) body;
    state = State.HEADER_DECIDED;
  }

  /**
   * {@link State#HEADER_DECIDED}: a frame that lies whole in {@code in} is delivered as a slice of it, without
   * a copy; otherwise it is gathered, starting with what {@code in} holds of it.
   */
  private void takeFrame(ByteBuf in) {
    int frameSize = headerSize + bodyLength;
    if (!partial.hasHeader() && in.readableBytes() >= frameSize) {
      state = State.AT_BOUNDARY;
      deliver(in.readRetainedSlice(frameSize));
    } else {
      partial.start(in.alloc(), frameSize);
      state = State.READING_BODY;
      readBody(in);
    }
  }

  /** {@link State#READING_BODY}: gathers from {@code in}; delivers the frame once whole. */
  private void readBody(ByteBuf in) {
    if (partial.fill(in)) {
      state = State.AT_BOUNDARY;
      deliver(partial.take());
    }
  }

  private void deliver(ByteBuf frame) {
    delivered += frame.readableBytes();
    listener.frame(frame);
  }

  private void fail(FramingException error) {
    state = State.FAILED;
    pause();
    releaseBuffers();
    listener.failed(error);
  }

  private void hold(ByteBuf bytes) {
    if (held == null) {
      held = bytes;
    } else {
      // From the reads' own allocator, which the frames gathered from these bytes then come from as well.
      CompositeByteBuf composite = held instanceof CompositeByteBuf c ? c : held.alloc().compositeBuffer().addComponent(true, held);
      held = composite.addComponent(true, bytes);
    }
  }

  /** Stops delivering frames, including those already received, and stops reading the source. */
  public void pause() {
    paused = true;
    if (demand != null) {
      demand.reading(false);
    }
  }

  /**
   * Delivers the frames received meanwhile (the listener may pause once more while they are delivered),
   * then resumes reading the source; not after a protocol error.
   */
  public void resume() {
    if (state == State.FAILED) {
      return;
    }
    paused = false;
    if (held != null) {
      ByteBuf bytes = held;
      held = null;
      parse(bytes);
    }
    if (!paused && demand != null) {
      demand.reading(true);
    }
  }

  /** Whether bytes received while paused wait to be parsed (whole frames may be among them). */
  public boolean holdsUnparsedBytes() {
    return held != null;
  }

  /**
   * Memory for the source's next read to land in, while a frame that spans reads lacks {@code least} bytes or more
   * (a read's guess) and the parser reads: the part of the frame's memory those bytes go to, at most {@code most}
   * bytes, and no more than {@code least} while the frame lacks more than one piece (1 MiB), so that they are not
   * copied again. Null otherwise. The read must be the next one {@link #handle}d.
   */
  public ByteBuf landingFor(ByteBufAllocator alloc, int least, int most) {
    return state == State.READING_BODY && !paused && held == null ? partial.lend(alloc, least, most) : null;
  }

  /** True when no frame has been started and not finished: an end here is a clean one. */
  public boolean atFrameBoundary() {
    return received == delivered;
  }

  /** Memory set aside for a large partial frame beyond its {@link #bufferedBytes()}: the unfilled part of its last piece. */
  public long setAsideBytes() {
    return partial.setAsideBytes();
  }

  /** Bytes received and not yet delivered: a partial frame, or whole frames held while paused. */
  public long bufferedBytes() {
    return received - delivered;
  }

  /**
   * The whole size, header included, of the frame whose header has been decided and which is not delivered
   * yet; 0 when there is none (between frames, inside a header, after a failure).
   */
  public long announcedFrameSize() {
    return state == State.HEADER_DECIDED || state == State.READING_BODY ? (long) headerSize + bodyLength : 0;
  }

  /**
   * Releases what the parser holds; call when the stream is gone. A frame under way is dropped: bytes fed
   * after this would start a new one.
   */
  public void releaseBuffers() {
    releases++;
    partial.release();
    if (held != null) {
      held.release();
      held = null;
    }
    if (state != State.FAILED) {
      state = State.AT_BOUNDARY;
    }
  }
}
