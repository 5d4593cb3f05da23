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
 * against {@code maxFrameSize} (as an unsigned value) before a single payload byte is buffered. A
 * zero-length frame is delivered straight from the header, since a record of size 0 cannot be requested.
 * <p>
 * The parser owns the source's demand: {@link #pause()} and {@link #resume()} go through it, never to the
 * source directly, so records already buffered stop as well. It knows nothing of sockets; fed through
 * {@link #handle(Buffer)} it works on raw buffers, which is how it is unit-tested.
 * <p>
 * Not thread-safe: use it from one context, like the stream it reads.
 */
public final class FrameParser implements Handler<Buffer> {

  private static final int AWAITING_HEADER = -1;
  private static final Buffer EMPTY = Buffer.buffer(0);

  private final RecordParser records;
  private final int maxFrameSize;

  /** Payload length of the frame being assembled, or {@link #AWAITING_HEADER}. */
  private int bodyLength = AWAITING_HEADER;
  /** The stream ended inside a header or a body. */
  private boolean truncated;
  /** A protocol error was reported; nothing more is delivered. */
  private boolean failed;

  private Handler<Buffer> frameHandler;
  private Handler<Throwable> exceptionHandler;
  private Handler<Void> endHandler;

  private FrameParser(int maxFrameSize, ReadStream<Buffer> source) {
    if (maxFrameSize <= 0) {
      throw new IllegalArgumentException("maxFrameSize must be positive: " + maxFrameSize);
    }
    this.maxFrameSize = maxFrameSize;
    this.records = source == null
      ? RecordParser.newFixed(Frames.HEADER_SIZE)
      : RecordParser.newFixed(Frames.HEADER_SIZE, source);
    // Handlers go on the record parser, never on the source: the record parser installs its own there.
    records.exceptionHandler(this::reportError);
    records.endHandler(v -> {
      Handler<Void> h = endHandler;
      if (h != null) {
        h.handle(null);
      }
    });
    records.handler(this::onRecord);
  }

  /** A parser reading {@code source}, taking over its data, end and exception handlers and its demand. */
  public static FrameParser reading(ReadStream<Buffer> source, int maxFrameSize) {
    return new FrameParser(maxFrameSize, source);
  }

  /** A parser fed by hand through {@link #handle(Buffer)}. */
  public static FrameParser standalone(int maxFrameSize) {
    return new FrameParser(maxFrameSize, null);
  }

  /** Receives each complete frame's payload, in stream order. */
  public FrameParser frameHandler(Handler<Buffer> handler) {
    this.frameHandler = handler;
    return this;
  }

  /**
   * Receives a {@link FrameTooLargeException} on an oversized header (parsing has stopped by then),
   * or the source's own failures.
   */
  public FrameParser exceptionHandler(Handler<Throwable> handler) {
    this.exceptionHandler = handler;
    return this;
  }

  /** Called when the source ends; {@link #atFrameBoundary()} then tells a clean end from a cut frame. */
  public FrameParser endHandler(Handler<Void> handler) {
    this.endHandler = handler;
    return this;
  }

  /** Feeds raw bytes; only for a {@link #standalone} parser. */
  @Override
  public void handle(Buffer bytes) {
    records.handle(bytes);
  }

  /** Stops delivering frames, including those already buffered, and stops reading the source. */
  public void pause() {
    records.pause();
  }

  /** Delivers buffered frames again and resumes reading the source, unless a protocol error stopped it. */
  public void resume() {
    if (!failed) {
      records.resume();
    }
  }

  /** True when no frame has been started and not finished, so an end here is a clean one. */
  public boolean atFrameBoundary() {
    return bodyLength == AWAITING_HEADER && !truncated;
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
    if (header.length() < Frames.HEADER_SIZE) {
      // The record parser hands over the leftover bytes when the stream ends mid-header.
      truncated = true;
      return;
    }
    long length = header.getUnsignedIntLE(0);
    if (length > maxFrameSize) {
      failed = true;
      records.pause();
      reportError(new FrameTooLargeException(length, maxFrameSize));
    } else if (length == 0) {
      deliver(EMPTY);
    } else {
      bodyLength = (int) length;
      records.fixedSizeMode(bodyLength);
    }
  }

  private void onBody(Buffer body) {
    if (body.length() < bodyLength) {
      truncated = true;
      return;
    }
    bodyLength = AWAITING_HEADER;
    records.fixedSizeMode(Frames.HEADER_SIZE);
    deliver(body);
  }

  private void deliver(Buffer payload) {
    Handler<Buffer> h = frameHandler;
    if (h != null) {
      h.handle(payload);
    }
  }

  private void reportError(Throwable error) {
    Handler<Throwable> h = exceptionHandler;
    if (h != null) {
      h.handle(error);
    }
  }
}
