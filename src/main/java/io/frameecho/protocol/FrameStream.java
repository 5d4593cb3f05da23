package io.frameecho.protocol;

import io.netty.buffer.ByteBuf;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.streams.ReadStream;

import java.io.EOFException;

/**
 * Length-prefixed frames as a Vert.x stream, the way {@code RecordParser} does records: a {@code Handler<Buffer>} fed
 * bytes, and a {@code ReadStream<Buffer>} of the messages they carry, over a {@link FrameParser}.
 * <pre>{@code
 * FrameStream frames = FrameStream.newParser(LengthField.of(2, ByteOrder.BIG_ENDIAN), 65535, socket);
 * frames.handler(message -> ...);
 * socket.write(frames.form().frame(reply));
 * }</pre>
 * A refused header goes to the {@link #exceptionHandler} and nothing more is parsed; a stream that ends inside a frame
 * reports an {@link EOFException}, then ends. Each message is a copy the handler owns. Not thread-safe: use it from the
 * context of the stream it reads.
 */
public final class FrameStream implements ReadStream<Buffer>, Handler<Buffer> {

  private final LengthField form;
  private final FrameParser parser;
  private Handler<Buffer> handler;
  private Handler<Throwable> exceptionHandler;
  private Handler<Void> endHandler;
  /** Messages still wanted: {@link Long#MAX_VALUE} while flowing, 0 while paused. */
  private long demand = Long.MAX_VALUE;
  private boolean sourceEnded;
  private boolean ended;

  private FrameStream(LengthField form, int maxFrameSize, ReadStream<Buffer> source) {
    this.form = form;
    FrameParser.Demand reading = source == null ? on -> { } : on -> {
      if (on) {
        source.resume();
      } else {
        source.pause();
      }
    };
    this.parser = FrameParser.controlling(reading, form, maxFrameSize, new FrameParser.Listener() {
      @Override
      public void frame(ByteBuf frame) {
        deliver(frame);
      }

      @Override
      public void failed(Throwable error) {
        report(error);
      }
    });
  }

  /** A parser fed by hand through {@link #handle(Buffer)}; set its {@link #handler}. */
  public static FrameStream newParser(LengthField form, int maxFrameSize) {
    return new FrameStream(form, maxFrameSize, null);
  }

  /** A parser fed by hand through {@link #handle(Buffer)}, handing each message to {@code handler}. */
  public static FrameStream newParser(LengthField form, int maxFrameSize, Handler<Buffer> handler) {
    return newParser(form, maxFrameSize).handler(handler);
  }

  /**
   * A stream of the messages read from {@code source}: it takes over the source's handler, end and exception handlers,
   * and its demand (pausing this stream pauses the source).
   */
  public static FrameStream newParser(LengthField form, int maxFrameSize, ReadStream<Buffer> source) {
    FrameStream frames = new FrameStream(form, maxFrameSize, source);
    source.exceptionHandler(frames::report);
    source.endHandler(v -> frames.sourceEnded());
    source.handler(frames);
    return frames;
  }

  /** The form of the frames read. */
  public LengthField form() {
    return form;
  }

  /** Feeds the bytes as they arrived (copied: the caller keeps its buffer). */
  @Override
  public void handle(Buffer bytes) {
    parser.handle(bytes);
  }

  private void deliver(ByteBuf frame) {
    Buffer message = form.message(frame);
    if (demand != Long.MAX_VALUE && --demand == 0) {
      parser.pause();
    }
    Handler<Buffer> h = handler;
    if (h != null) {
      h.handle(message);
    }
  }

  private void report(Throwable error) {
    Handler<Throwable> h = exceptionHandler;
    if (h != null) {
      h.handle(error);
    }
  }

  private void sourceEnded() {
    sourceEnded = true;
    endIfDelivered();
  }

  /** Once the source has ended and every whole frame it sent is delivered: this stream ends. */
  private void endIfDelivered() {
    if (!sourceEnded || ended || parser.holdsUnparsedBytes()) {
      return;
    }
    ended = true;
    if (!parser.atFrameBoundary()) {
      report(new EOFException("the stream ended inside a frame, " + parser.bufferedBytes() + " bytes into it"));
    }
    parser.releaseBuffers();
    Handler<Void> h = endHandler;
    if (h != null) {
      h.handle(null);
    }
  }

  @Override
  public FrameStream exceptionHandler(Handler<Throwable> handler) {
    this.exceptionHandler = handler;
    return this;
  }

  @Override
  public FrameStream handler(Handler<Buffer> handler) {
    this.handler = handler;
    return this;
  }

  @Override
  public FrameStream pause() {
    demand = 0;
    parser.pause();
    return this;
  }

  @Override
  public FrameStream resume() {
    return fetch(Long.MAX_VALUE);
  }

  @Override
  public FrameStream fetch(long amount) {
    if (amount < 0) {
      throw new IllegalArgumentException("fetch: " + amount + " cannot be negative");
    }
    if (amount == 0) {
      return this;
    }
    demand = demand > Long.MAX_VALUE - amount ? Long.MAX_VALUE : demand + amount;
    parser.resume();
    endIfDelivered();
    return this;
  }

  @Override
  public FrameStream endHandler(Handler<Void> endHandler) {
    this.endHandler = endHandler;
    return this;
  }
}
