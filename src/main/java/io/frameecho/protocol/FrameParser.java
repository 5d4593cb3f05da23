package io.frameecho.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.streams.ReadStream;

/**
 * Reassembles length-prefixed frames from a byte stream: the parsing half of the book's
 * {@code try_one_request}.
 * <p>
 * A two-state machine (header, body) over Netty buffers. A frame that lies whole in one read is handed
 * over as a slice of that read, without a copy; a frame that spans reads is gathered, once its header has
 * announced the size, into one buffer of exactly that size, or above 1 MiB into 1 MiB pieces the allocator
 * pools (never a buffer doubling its way up). The length is checked against {@code maxFrameSize} (as an
 * unsigned value) before any body byte is gathered.
 * <p>
 * The parser owns the source's demand: {@link #pause()} and {@link #resume()} go through it, never to the
 * source directly, so bytes already received stop as well. It counts the bytes it has been given and
 * those it has delivered, which tells a clean end from a cut frame and when a frame has started. It knows
 * nothing of sockets; fed through {@link #handle(Buffer)} or {@link #handle(ByteBuf)} it works on raw
 * buffers, which is how it is unit-tested.
 * <p>
 * Not thread-safe: use it from one context, like the stream it reads.
 */
public final class FrameParser implements Handler<Buffer> {

  /** What the parser tells its owner, in stream order. */
  public interface Listener {

    /** A complete request or response payload, in a buffer of its own. */
    void frame(Buffer payload);

    /**
     * A complete frame, header included, as a Netty buffer the listener now owns and must release. The
     * default copies the payload out and calls {@link #frame(Buffer)}; override it to avoid the copy.
     */
    default void frame(ByteBuf frame) {
      try {
        byte[] payload = new byte[frame.readableBytes() - Frames.HEADER_SIZE];
        frame.getBytes(frame.readerIndex() + Frames.HEADER_SIZE, payload);
        frame(Buffer.buffer(payload));
      } finally {
        frame.release();
      }
    }

    /**
     * A {@link FrameTooLargeException} on an oversized header (the parser has stopped for good by then), or
     * the source's own failure.
     */
    void failed(Throwable error);

    /** The source ended; {@link #atFrameBoundary()} tells a clean end from a cut frame. */
    default void ended() {
    }

    /** The first bytes of a frame have arrived (the frame is not complete yet). */
    default void frameStarted() {
    }

    /** A header announced {@code length} payload bytes (0 &lt; length &lt;= max); the body is read next. */
    default void bodyAnnounced(int length) {
    }

    /**
     * The bytes received so far have been parsed, as far as the parser could go: the frames of one read
     * have all been delivered. A listener that batches its answers writes them now.
     */
    default void parsed() {
    }
  }

  /** Turns reading from the source off and on. */
  @FunctionalInterface
  public interface Demand {
    void reading(boolean on);
  }

  private static final int AWAITING_HEADER = -1;
  /** Frames bigger than this that span reads are gathered in pieces of this size (1 MiB). */
  static final int PIECE_SIZE = 1 << 20;

  private final Demand demand;
  private final int maxFrameSize;
  private final Listener listener;

  /** Bytes of a frame not complete yet (header bytes, or header and part of the body); null when none. */
  private ByteBuf partial;
  /** The piece being filled, while {@link #partial} gathers a big frame in pieces; null otherwise. */
  private ByteBuf piece;
  /** Payload length of the frame in {@link #partial} once its header is complete, or {@link #AWAITING_HEADER}. */
  private int bodyLength = AWAITING_HEADER;
  /** Whether {@link Listener#bodyAnnounced} was called for the frame at the front of the unread bytes. */
  private boolean announced;
  /** Bytes received while paused, not parsed yet; null when none. */
  private ByteBuf held;
  /** Bytes given to the parser, and bytes of the frames it has delivered. */
  private long received;
  private long delivered;
  private long frames;
  private boolean paused;
  /** A protocol error was reported; nothing more is delivered. */
  private boolean failed;

  private FrameParser(Demand demand, int maxFrameSize, Listener listener) {
    if (maxFrameSize <= 0) {
      throw new IllegalArgumentException("maxFrameSize must be positive: " + maxFrameSize);
    }
    this.demand = demand;
    this.maxFrameSize = maxFrameSize;
    this.listener = listener;
  }

  /**
   * A parser reading {@code source}: it takes over the source's data, end and exception handlers and its
   * demand. At the source's end it releases what it holds.
   */
  public static FrameParser reading(ReadStream<Buffer> source, int maxFrameSize, Listener listener) {
    FrameParser parser = new FrameParser(on -> {
      if (on) {
        source.resume();
      } else {
        source.pause();
      }
    }, maxFrameSize, listener);
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
    return new FrameParser(demand, maxFrameSize, listener);
  }

  /** A parser fed by hand. */
  public static FrameParser standalone(int maxFrameSize, Listener listener) {
    return new FrameParser(null, maxFrameSize, listener);
  }

  /** Feeds bytes as they arrived, from a Vert.x buffer (copied: the caller keeps its buffer). */
  @Override
  public void handle(Buffer bytes) {
    handle(Unpooled.wrappedBuffer(bytes.getBytes()));
  }

  /** Feeds bytes as they arrived; the parser takes ownership of {@code bytes} and releases it. */
  public void handle(ByteBuf bytes) {
    if (failed) {
      bytes.release();
      return;
    }
    boolean wasAtBoundary = atFrameBoundary();
    long framesBefore = frames;
    received += bytes.readableBytes();
    if (paused || held != null) {
      hold(bytes);
    } else {
      parse(bytes);
    }
    if (!failed && !atFrameBoundary() && (wasAtBoundary || frames != framesBefore)) {
      listener.frameStarted();
    }
  }

  /** Parses {@code in} until it is used up, the parser pauses or fails; keeps what is left; releases {@code in}. */
  private void parse(ByteBuf in) {
    try {
      while (in.isReadable() && !paused && !failed) {
        if (partial != null) {
          gather(in);
        } else {
          sliceOrStart(in);
        }
      }
      if (in.isReadable() && !failed) {
        hold(in.retainedSlice());
        in.skipBytes(in.readableBytes());
      }
    } finally {
      in.release();
    }
    listener.parsed();
  }

  /** At a frame boundary: deliver whole frames as slices of {@code in}, or start gathering a partial one. */
  private void sliceOrStart(ByteBuf in) {
    int readable = in.readableBytes();
    if (readable < Frames.HEADER_SIZE) {
      partial = in.alloc().buffer(Frames.HEADER_SIZE);
      partial.writeBytes(in, readable);
      return;
    }
    long length = in.getUnsignedIntLE(in.readerIndex());
    if (!checkLength(length)) {
      return;
    }
    int body = (int) length;
    if (body > 0 && !announced) {
      announced = true;
      listener.bodyAnnounced(body);
      if (paused) {
        return;
      }
    }
    if (readable >= Frames.HEADER_SIZE + body) {
      ByteBuf frame = in.readRetainedSlice(Frames.HEADER_SIZE + body);
      deliver(frame);
    } else {
      startGathering(in.alloc(), body);
      fill(in);
    }
  }

  /** Inside a frame that spans reads: complete its header, then its body, from {@code in}. */
  private void gather(ByteBuf in) {
    if (bodyLength == AWAITING_HEADER) {
      int missing = Frames.HEADER_SIZE - partial.readableBytes();
      partial.writeBytes(in, Math.min(missing, in.readableBytes()));
      if (partial.readableBytes() < Frames.HEADER_SIZE) {
        return;
      }
      long length = partial.getUnsignedIntLE(partial.readerIndex());
      if (!checkLength(length)) {
        return;
      }
      int body = (int) length;
      if (body == 0) {
        ByteBuf frame = partial;
        partial = null;
        deliver(frame);
        return;
      }
      ByteBuf header = partial;
      startGathering(in.alloc(), body);
      fill(header);
      header.release();
      if (!announced) {
        announced = true;
        listener.bodyAnnounced(body);
        if (paused) {
          return;
        }
      }
    }
    fill(in);
    if (partial.readableBytes() == Frames.HEADER_SIZE + bodyLength) {
      ByteBuf frame = partial;
      partial = null;
      bodyLength = AWAITING_HEADER;
      deliver(frame);
    }
  }

  /**
   * Allocates for a frame that spans reads, now that its header has told its size: one buffer of exactly
   * that size, or, above {@link #PIECE_SIZE}, a composite of pieces of that size, so that big frames are
   * made of memory the allocator pools and reuses rather than a fresh allocation per frame.
   */
  private void startGathering(ByteBufAllocator alloc, int body) {
    bodyLength = body;
    int size = Frames.HEADER_SIZE + body;
    partial = size <= PIECE_SIZE ? alloc.ioBuffer(size) : alloc.compositeDirectBuffer(Integer.MAX_VALUE);
  }

  /** Copies from {@code from} into the frame being gathered, up to its end. */
  private void fill(ByteBuf from) {
    int missing = Frames.HEADER_SIZE + bodyLength - partial.readableBytes();
    if (!(partial instanceof CompositeByteBuf pieces)) {
      partial.writeBytes(from, Math.min(missing, from.readableBytes()));
      return;
    }
    while (from.isReadable() && missing > 0) {
      if (piece == null) {
        piece = from.alloc().ioBuffer(Math.min(PIECE_SIZE, missing));
      }
      int n = Math.min(piece.writableBytes(), from.readableBytes());
      piece.writeBytes(from, n);
      if (!piece.isWritable()) {
        missing -= piece.readableBytes();
        pieces.addComponent(true, piece);
        piece = null;
      }
    }
  }

  private boolean checkLength(long length) {
    if (length <= maxFrameSize) {
      return true;
    }
    failed = true;
    pause();
    releaseBuffers();
    listener.failed(new FrameTooLargeException(length, maxFrameSize));
    return false;
  }

  private void deliver(ByteBuf frame) {
    delivered += frame.readableBytes();
    frames++;
    announced = false;
    listener.frame(frame);
  }

  private void hold(ByteBuf bytes) {
    if (held == null) {
      held = bytes;
    } else {
      CompositeByteBuf composite = held instanceof CompositeByteBuf c ? c : ByteBufAllocator.DEFAULT.compositeBuffer().addComponent(true, held);
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
    if (failed) {
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

  /** True when no frame has been started and not finished: an end here is a clean one. */
  public boolean atFrameBoundary() {
    return received == delivered;
  }

  /** Bytes received and not yet delivered: a partial frame, or whole frames held while paused. */
  public long bufferedBytes() {
    return received - delivered;
  }

  /** Releases what the parser holds; call when the stream is gone. */
  public void releaseBuffers() {
    if (partial != null) {
      partial.release();
      partial = null;
    }
    if (piece != null) {
      piece.release();
      piece = null;
    }
    if (held != null) {
      held.release();
      held = null;
    }
  }
}
