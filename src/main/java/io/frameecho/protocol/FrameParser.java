package io.frameecho.protocol;

import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.parsetools.RecordParser;
import io.vertx.core.streams.ReadStream;

/**
 * Reassembles length-prefixed frames from a byte stream: the parsing half of the book's
 * {@code try_one_request}.
 * <p>
 * A two-state machine over a {@link RecordParser} in fixed-size mode: it asks for a 4-byte header, then
 * for exactly the payload length the header announced, then for the next header. The length is checked
 * against {@code maxFrameSize} (as an unsigned value) before the body is read; a zero-length frame is
 * delivered straight from the header, since a record of size 0 cannot be requested.
 * <p>
 * The parser owns the source's demand: {@link #pause()} and {@link #resume()} go through it, never to the
 * source directly, so frames already buffered stop as well. It counts the bytes it has been given and
 * those it has delivered, which tells a clean end from a cut frame and when a frame has started. It knows
 * nothing of sockets; fed through {@link #handle(Buffer)} it works on raw buffers, which is how it is
 * unit-tested.
 * <p>
 * Not thread-safe: use it from one context, like the stream it reads.
 */
public final class FrameParser implements Handler<Buffer> {

  /** What the parser tells its owner, in stream order. */
  public interface Listener {

    /** A complete request or response payload. */
    void frame(Buffer payload);

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

    /** A header announced {@code length} payload bytes (0 < length <= max); the body is read next. */
    default void bodyAnnounced(int length) {
    }
  }

  private static final int AWAITING_HEADER = -1;
  private static final Buffer EMPTY = Buffer.buffer(0);

  private final RecordParser records = RecordParser.newFixed(Frames.HEADER_SIZE);
  private final ReadStream<Buffer> source;
  private final int maxFrameSize;
  private final Listener listener;

  /** Payload length of the frame being assembled, or {@link #AWAITING_HEADER}. */
  private int bodyLength = AWAITING_HEADER;
  /** Bytes given to the parser, and bytes of the headers and bodies it has delivered. */
  private long received;
  private long delivered;
  private long frames;
  private boolean paused;
  /** A protocol error was reported; nothing more is delivered. */
  private boolean failed;

  private FrameParser(ReadStream<Buffer> source, int maxFrameSize, Listener listener) {
    if (maxFrameSize <= 0) {
      throw new IllegalArgumentException("maxFrameSize must be positive: " + maxFrameSize);
    }
    this.source = source;
    this.maxFrameSize = maxFrameSize;
    this.listener = listener;
    records.handler(this::onRecord);
    if (source != null) {
      source.exceptionHandler(listener::failed);
      source.endHandler(v -> listener.ended());
      source.handler(this);
    }
  }

  /** A parser reading {@code source}: it takes over the source's data, end and exception handlers and its demand. */
  public static FrameParser reading(ReadStream<Buffer> source, int maxFrameSize, Listener listener) {
    return new FrameParser(source, maxFrameSize, listener);
  }

  /** A parser fed by hand through {@link #handle(Buffer)}. */
  public static FrameParser standalone(int maxFrameSize, Listener listener) {
    return new FrameParser(null, maxFrameSize, listener);
  }

  /** Feeds raw bytes, as they arrived. */
  @Override
  public void handle(Buffer bytes) {
    boolean wasAtBoundary = atFrameBoundary();
    long framesBefore = frames;
    received += bytes.length();
    records.handle(bytes);
    if (!failed && !atFrameBoundary() && (wasAtBoundary || frames != framesBefore)) {
      listener.frameStarted();
    }
  }

  /** Stops delivering frames, including those already buffered, and stops reading the source. */
  public void pause() {
    paused = true;
    records.pause();
    if (source != null) {
      source.pause();
    }
  }

  /**
   * Delivers buffered frames again (the listener may pause once more while they are delivered), then
   * resumes reading the source; not after a protocol error.
   */
  public void resume() {
    if (failed) {
      return;
    }
    paused = false;
    records.resume();
    if (!paused && source != null) {
      source.resume();
    }
  }

  public boolean isPaused() {
    return paused;
  }

  /** True when no frame has been started and not finished: an end here is a clean one. */
  public boolean atFrameBoundary() {
    return bodyLength == AWAITING_HEADER && received == delivered;
  }

  /** Bytes received and not yet delivered: a partial frame, or whole frames held while paused. */
  public long bufferedBytes() {
    return received - delivered;
  }

  private void onRecord(Buffer record) {
    if (failed) {
      return;
    }
    if (bodyLength == AWAITING_HEADER) {
      onHeader(record);
    } else {
      onBody(record);
    }
  }

  private void onHeader(Buffer header) {
    delivered += Frames.HEADER_SIZE;
    long length = header.getUnsignedIntLE(0);
    if (length > maxFrameSize) {
      failed = true;
      pause();
      listener.failed(new FrameTooLargeException(length, maxFrameSize));
    } else if (length == 0) {
      frames++;
      listener.frame(EMPTY);
    } else {
      bodyLength = (int) length;
      records.fixedSizeMode(bodyLength);
      listener.bodyAnnounced(bodyLength);
    }
  }

  private void onBody(Buffer body) {
    delivered += bodyLength;
    bodyLength = AWAITING_HEADER;
    records.fixedSizeMode(Frames.HEADER_SIZE);
    frames++;
    listener.frame(body);
  }
}
