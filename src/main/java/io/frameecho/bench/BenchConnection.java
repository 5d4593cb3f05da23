package io.frameecho.bench;

import io.frameecho.protocol.LengthField;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One load-generating connection, on one Netty event loop. It keeps up to {@code pipeline} requests in
 * flight (closed loop) or sends on a {@link RateSchedule} (open loop), parses responses in place without
 * copying them, checks their length (and with {@code verify} every byte), and records each latency.
 * In steady state it allocates nothing per request: sends use pooled buffers or slices of one template,
 * and the in-flight bookkeeping is a pair of ring arrays.
 */
final class BenchConnection extends ChannelInboundHandlerAdapter {

  /** Payloads up to this size are copied into the frame's buffer; larger ones are sent as a slice. */
  private static final int COPY_LIMIT = 16 * 1024;

  private final int id;
  private final BenchSettings settings;
  private final LoadStats stats;
  private final AtomicLong requestBudget;
  private final ByteBuf template;
  private final SplittableRandom random;

  /** Send time (or intended send time) and payload size of each request in flight, oldest at head. */
  private final long[] sentNanos;
  private final int[] sentSize;
  private int head;
  private int inFlight;
  private long nextSeq;
  private long responseSeq;

  private RateSchedule schedule;
  private boolean wakeUpScheduled;
  private volatile boolean stopping;
  /** This side closed the connection (done, or failed): the close is not the server's. */
  private boolean closedHere;
  /** Set once the run starts; before that, a connection belongs to the connect phase. */
  private volatile boolean started;
  private boolean handshakeFailed;
  private ChannelHandlerContext ctx;

  // Response parsing state: a header split across reads collects in a buffer made once (no allocation per
  // response, and a heap array the leak detector need not track), then body bytes still to come.
  private final ByteBuf splitHeader;
  /** The frames' form; whether it is frame-echo's own, read and written here without asking the form. */
  private final LengthField form;
  private final boolean ownForm;
  private int bodyRemaining = -1;
  private int bodyOffset;
  private long bodySeed;
  private boolean bodyMismatch;

  /**
   * @param requestBudget requests still to send across all connections, or null when the run is timed
   * @param template at least {@code size.max()} readable bytes, sliced for unverified payloads
   */
  BenchConnection(int id, BenchSettings settings, LoadStats stats, AtomicLong requestBudget, ByteBuf template) {
    this.id = id;
    this.settings = settings;
    this.stats = stats;
    this.requestBudget = requestBudget;
    this.template = template;
    this.random = new SplittableRandom(id * 0x9E3779B97F4A7C15L);
    this.sentNanos = new long[settings.pipeline()];
    this.sentSize = new int[settings.pipeline()];
    this.form = settings.framing();
    this.ownForm = form.isDefault();
    this.splitHeader = Unpooled.wrappedBuffer(new byte[form.headerSize()]).clear();
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
  }

  /** Starts sending; call on any thread once every connection is up. */
  void start() {
    started = true;
    ctx.executor().execute(() -> {
      if (settings.rate() > 0) {
        schedule = new RateSchedule(System.nanoTime(), settings.rate() / settings.connections());
      }
      sendWhatIsDue();
    });
  }

  /** Stops sending; the connection closes itself once its last response is in. */
  void stop() {
    stopping = true;
    ctx.executor().execute(this::closeIfDone);
  }

  private void sendWhatIsDue() {
    if (settings.idle()) {
      return;
    }
    boolean wrote = false;
    long now = 0;
    while (!stopping && inFlight < sentNanos.length) {
      long sendTime;
      if (schedule != null) {
        long due = schedule.intendedNanos(nextSeq);
        now = System.nanoTime();
        if (due > now) {
          wakeUpAt(due - now);
          break;
        }
        sendTime = due;
      } else {
        sendTime = System.nanoTime();
      }
      if (requestBudget != null && requestBudget.decrementAndGet() < 0) {
        stopping = true;
        break;
      }
      send(sendTime);
      wrote = true;
    }
    if (wrote) {
      ctx.flush();
    }
    closeIfDone();
  }

  private void wakeUpAt(long delayNanos) {
    if (!wakeUpScheduled) {
      wakeUpScheduled = true;
      ctx.executor().schedule(() -> {
        wakeUpScheduled = false;
        sendWhatIsDue();
      }, delayNanos, TimeUnit.NANOSECONDS);
    }
  }

  /**
   * Writes one request frame of {@code size} bytes, not flushed: the seeded pattern when {@code verify}, else the
   * template's first bytes (copied into one pooled buffer when small, cheaper than a header plus a slice).
   */
  static void writeFrame(ChannelHandlerContext ctx, LengthField form, int size, boolean verify, long seed, ByteBuf template) {
    if (verify) {
      ByteBuf frame = header(form, ctx.alloc().ioBuffer(form.headerSize() + size), size);
      PayloadPattern.write(frame, seed, size);
      ctx.write(frame, ctx.voidPromise());
    } else if (size <= COPY_LIMIT) {
      ByteBuf frame = header(form, ctx.alloc().ioBuffer(form.headerSize() + size), size);
      frame.writeBytes(template, 0, size);
      ctx.write(frame, ctx.voidPromise());
    } else {
      ctx.write(header(form, ctx.alloc().ioBuffer(form.headerSize()), size), ctx.voidPromise());
      ctx.write(template.retainedSlice(0, size), ctx.voidPromise());
    }
  }

  /** A header of {@code form} announcing a body of {@code size} bytes; frame-echo's own written inline. */
  private static ByteBuf header(LengthField form, ByteBuf out, int size) {
    return form == LengthField.DEFAULT ? out.writeIntLE(size) : form.writeHeader(out, size);
  }

  private void send(long sendTime) {
    int size = settings.size().next(random);
    long seq = nextSeq++;
    writeFrame(ctx, form, size, settings.verify(), PayloadPattern.seed(id, seq), template);
    int slot = (head + inFlight) % sentNanos.length;
    sentNanos[slot] = sendTime;
    sentSize[slot] = size;
    inFlight++;
    stats.bytesSent.add(size);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    ByteBuf in = (ByteBuf) msg;
    try {
      while (in.isReadable() && ctx.channel().isActive()) {
        if (bodyRemaining < 0) {
          readHeader(in);
        } else {
          readBody(in);
        }
      }
    } finally {
      in.release();
    }
    sendWhatIsDue();
  }

  private void readHeader(ByteBuf in) {
    long length;
    if (!splitHeader.isReadable() && in.readableBytes() >= splitHeader.capacity()) {
      length = ownForm ? in.getUnsignedIntLE(in.readerIndex()) : form.readLength(in, in.readerIndex()) + form.lengthAdjustment();
      in.skipBytes(splitHeader.capacity());
    } else {
      splitHeader.writeBytes(in, Math.min(splitHeader.writableBytes(), in.readableBytes()));
      if (splitHeader.isWritable()) {
        return;
      }
      length = form.readLength(splitHeader, 0) + form.lengthAdjustment();
      splitHeader.clear();
    }
    if (inFlight == 0) {
      fail("a response to no request");
      return;
    }
    if (length != sentSize[head]) {
      // Lengths differ: the stream cannot be followed any further.
      stats.mismatches.increment();
      fail("response length " + length + " for a request of " + sentSize[head] + " bytes");
      return;
    }
    bodyRemaining = (int) length;
    bodyOffset = 0;
    bodySeed = PayloadPattern.seed(id, responseSeq);
    bodyMismatch = false;
    if (bodyRemaining == 0) {
      completeResponse();
    }
  }

  private void readBody(ByteBuf in) {
    int n = Math.min(bodyRemaining, in.readableBytes());
    if (settings.verify() && !bodyMismatch && !PayloadPattern.matches(in, bodySeed, bodyOffset, n)) {
      bodyMismatch = true;
    }
    in.skipBytes(n);
    bodyRemaining -= n;
    bodyOffset += n;
    if (bodyRemaining == 0) {
      completeResponse();
    }
  }

  private void completeResponse() {
    long latency = System.nanoTime() - sentNanos[head];
    int size = sentSize[head];
    head = (head + 1) % sentNanos.length;
    inFlight--;
    responseSeq++;
    bodyRemaining = -1;
    if (bodyMismatch) {
      stats.mismatches.increment();
    }
    stats.recordLatency(latency);
    stats.bytesReceived.add(size);
    stats.completed.increment();
  }

  private void closeIfDone() {
    if (stopping && inFlight == 0 && ctx.channel().isOpen()) {
      closedHere = true;
      ctx.close();
    }
  }

  private void fail(String why) {
    if (!stopping) {
      stats.errors.increment();
      stats.noteError("connection " + id + ": " + why);
    }
    stopping = true;
    closedHere = true;
    ctx.close();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    // Not 'stopping': the run may have ended (and stopped every connection) on seeing the server's close,
    // a moment before this event, which Netty delivers after the channel's close future.
    if (!closedHere && !handshakeFailed) {
      closedHere = true;
      stopping = true;
      if (started && bodyRemaining < 0 && !splitHeader.isReadable()) {
        // A FIN after whole responses: the server ended the connection cleanly (a shutdown, a restart, a
        // timeout). Not an error, but the requests still in flight went unanswered.
        stats.serverCloses.increment();
        stats.unanswered.add(inFlight);
      } else {
        stats.errors.increment();
        stats.noteError("connection " + id + ": closed by the server inside a response, with " + inFlight + " requests in flight");
      }
    }
  }

  /** A failed TLS handshake is counted by the connect phase as a connection failure, not as an error here. */
  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
    if (event instanceof SslHandshakeCompletionEvent handshake && !handshake.isSuccess() && !started) {
      handshakeFailed = true;
      stopping = true;
    }
    ctx.fireUserEventTriggered(event);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (handshakeFailed) {
      closedHere = true;
      ctx.close();
      return;
    }
    fail(cause.toString());
  }
}
