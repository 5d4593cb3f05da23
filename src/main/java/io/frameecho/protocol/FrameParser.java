package io.frameecho.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.streams.ReadStream;

/**
 * Reassembles length-prefixed frames, in the form of a {@link LengthField}, from a byte stream. A frame lying whole in
 * one read is handed over as a slice of it, without a copy; one spanning reads is gathered by a {@link PartialFrame}
 * in memory that grows with the bytes that arrived, never with the length the header announces. The length is checked
 * against {@code maxFrameSize} before any body byte is kept.
 * <p>
 * The parser owns the source's demand: {@link #pause()} and {@link #resume()} go through it so that bytes already
 * received stop too. {@link FrameStream} wraps it as a Vert.x {@code ReadStream}. Not thread-safe: use it from one
 * context.
 */
public final class FrameParser implements Handler<Buffer> {

  /** What the parser tells its owner, in stream order: a frame, a failure, the end. */
  public interface Listener {

    /** A complete frame, header included; the listener owns it and must release it. */
    void frame(ByteBuf frame);

    /** A {@link FramingException} on a refused header (the parser has stopped for good), or the source's failure. */
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

  /** Where the parser stands in the byte stream; pausing is orthogonal to it. */
  enum State {
    /** Between frames: the next byte is the first of a header. */
    AT_BOUNDARY,
    /** A read ended inside a header; its first bytes wait in the {@link PartialFrame}. */
    READING_HEADER,
    /** A whole header has been checked; the frame is taken next, as a slice or gathered. */
    HEADER_DECIDED,
    /** The frame spans reads and is being gathered. */
    READING_BODY,
    /** A header was refused: every byte given is dropped. Final. */
    FAILED
  }

  private final Demand demand;
  private final int maxFrameSize;
  private final Listener listener;
  private final LengthField form;
  private final int headerSize;
  private final int lengthAdjustment;
  /** Frame-echo's own length field (4 bytes, little-endian, at offset 0) is read without a switch. */
  private final boolean ownLengthField;
  /** The frame that spans reads, made when one does and let go once delivered; null between such frames. */
  private PartialFrame partial;

  private State state = State.AT_BOUNDARY;
  /** Payload length of the decided header, from {@link State#HEADER_DECIDED} until the frame is delivered. */
  private int bodyLength;
  private boolean paused;
  /** Bytes received while paused, not parsed yet; null when none. */
  private ByteBuf held;
  /** Bytes given and bytes delivered: equal exactly at a frame boundary. */
  private long received;
  private long delivered;
  /** Counts {@link #releaseBuffers()} calls, so a parse it interrupts keeps nothing. */
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
  }

  /** A parser that takes over {@code source}'s handlers and demand, and releases what it holds at the source's end. */
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

  /** A parser fed through {@link #handle(ByteBuf)} that switches the source's reading through {@code demand}. */
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

  /** Feeds bytes, copied into a pooled buffer so that gathered frames come from pooled memory. */
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

  /** Parses {@code in} until it is used up or the parser pauses or fails; holds the rest; releases {@code in}. */
  private void parse(ByteBuf in) {
    int releasesBefore = releases;
    try {
      // A decided header goes on without another byte: it may end a zero-length frame.
      while (!paused && state != State.FAILED && (in.isReadable() || state == State.HEADER_DECIDED)) {
        switch (state) {
          case AT_BOUNDARY -> startFrame(in);
          case READING_HEADER -> readHeader(in);
          case HEADER_DECIDED -> takeFrame(in);
          case READING_BODY -> readBody(in);
          default -> throw new IllegalStateException(state.name());
        }
      }
      // Unless the owner released the buffers meanwhile (it closed): the rest then belongs to a stream that is gone.
      if (in.isReadable() && state != State.FAILED && releases == releasesBefore) {
        hold(in.retainedSlice());
        in.skipBytes(in.readableBytes());
      }
    } finally {
      in.release();
    }
  }

  private void startFrame(ByteBuf in) {
    if (in.readableBytes() < headerSize) {
      partial = new PartialFrame(form);
      partial.startHeader(in);
      state = State.READING_HEADER;
    } else {
      int start = in.readerIndex();
      decideHeader(ownLengthField ? in.getUnsignedIntLE(start) : form.readLength(in, start));
      if (state == State.HEADER_DECIDED && !paused) {
        takeFrame(in);
      }
    }
  }

  private void readHeader(ByteBuf in) {
    if (partial.fillHeader(in)) {
      decideHeader(partial.headerLength());
    }
  }

  /** The one place a header is decided, on the length field's unsigned value. */
  private void decideHeader(long length) {
    long body = length + lengthAdjustment;
    // Unsigned: a body the adjustment made negative is refused like one over the maximum.
    if (Long.compareUnsigned(body, maxFrameSize) > 0) {
      fail(form.refusal(length, maxFrameSize));
      return;
    }
    bodyLength = (int) body;
    state = State.HEADER_DECIDED;
  }

  /** A frame lying whole in {@code in} is delivered as a slice of it; otherwise gathering starts. */
  private void takeFrame(ByteBuf in) {
    int frameSize = headerSize + bodyLength;
    if (partial == null && in.readableBytes() >= frameSize) {
      state = State.AT_BOUNDARY;
      deliver(in.readRetainedSlice(frameSize));
    } else {
      if (partial == null) {
        partial = new PartialFrame(form);
      }
      partial.start(in.alloc(), frameSize);
      state = State.READING_BODY;
      readBody(in);
    }
  }

  private void readBody(ByteBuf in) {
    if (partial.fill(in)) {
      state = State.AT_BOUNDARY;
      ByteBuf frame = partial.take();
      partial = null;
      deliver(frame);
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
      // The reads' own allocator, so frames gathered from these bytes come from it too.
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

  /** Delivers the frames held meanwhile, then resumes reading the source; not after a protocol error. */
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

  /** Whether bytes received while paused wait to be parsed. */
  public boolean holdsUnparsedBytes() {
    return held != null;
  }

  /**
   * Memory for the next read to land in while a frame spanning reads is gathered, so its bytes are not copied again;
   * null otherwise. The read must be the next one {@link #handle}d. The memory is set aside ahead of the bytes (a piece
   * of up to 1 MiB, never more than the frame lacks): a caller that bounds memory asks only for a frame it affords.
   */
  public ByteBuf landingFor(ByteBufAllocator alloc, int least, int most) {
    return state == State.READING_BODY && !paused && held == null ? partial.lend(alloc, least, most) : null;
  }

  /** True when no frame has been started and not finished: an end here is a clean one. */
  public boolean atFrameBoundary() {
    return received == delivered;
  }

  /** Bytes received and not yet delivered: a partial frame, or whole frames held while paused. */
  public long bufferedBytes() {
    return received - delivered;
  }

  /** The whole size of the frame whose header is decided and not yet delivered; 0 when there is none. */
  public long announcedFrameSize() {
    return state == State.HEADER_DECIDED || state == State.READING_BODY ? (long) headerSize + bodyLength : 0;
  }

  /** Releases what the parser holds; call when the stream is gone. A frame under way is dropped. */
  public void releaseBuffers() {
    releases++;
    if (partial != null) {
      partial.release();
      partial = null;
    }
    if (held != null) {
      held.release();
      held = null;
    }
    if (state != State.FAILED) {
      state = State.AT_BOUNDARY;
    }
  }
}
