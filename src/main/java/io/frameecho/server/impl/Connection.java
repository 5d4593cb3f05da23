package io.frameecho.server.impl;

import io.frameecho.protocol.FrameParser;
import io.frameecho.protocol.FrameTooLargeException;
import io.frameecho.protocol.Frames;
import io.frameecho.server.EchoHandler;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.RequestHandler;
import io.netty.buffer.ByteBuf;
import io.vertx.core.Context;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.SocketAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;

/**
 * One client connection: the book's {@code Conn}. It wires its rooms together and makes the one decision
 * that is its own, the book's {@code want_close}: why it ends (one {@link CloseReason}, the first), and
 * when.
 * <pre>
 *  socket ─▶ {@link ChannelAdapter} ─bytes─▶ {@link FrameParser} ─frame─▶ {@link #frame(ByteBuf)} ─▶ {@link Responses} ─▶ {@link ResponseWriter} ─▶ socket
 *            (handle_read)                   (try_one_request, parsing)                           (echo / application)    (handle_write)
 * </pre>
 * {@link ReadGate} is {@code want_read}, {@link BudgetAccount} the seam to the process's buffer budget,
 * {@link ConnectionTimers} the idle, frame and write-stall clocks. Everything runs on the connection's
 * event loop, inside its context.
 */
public final class Connection implements FrameParser.Listener, ChannelAdapter.Events, ReadGate.Listener,
  OrderedAnswers.Listener, ConnectionTimers.Owner, BudgetAccount.Owner {

  private static final Logger log = LoggerFactory.getLogger(Connection.class);
  private static final int LOGGED_PAYLOAD_BYTES = 100;

  private final NetSocket socket;
  private final Vertx vertx;
  private final RequestHandler handler;
  private final FrameEchoOptions options;
  private final BufferBudget budget;
  private final FrameEchoMetrics metrics;
  private final Handler<Connection> closedHandler;

  private ChannelAdapter channel;
  private FrameParser parser;
  private ReadGate gate;
  private BudgetAccount account;
  private ResponseWriter writer;
  private Responses responses;
  private ConnectionTimers timers;

  /** The book's {@code want_close}, with its reason: the first reason wins. */
  private CloseReason closeReason;
  private Throwable ioError;
  /** Every answer is written: the socket closes once they are flushed. */
  private boolean closeRequested;
  /** The client shut down its sending side (or closed): answer what it sent, then close. */
  private boolean inputEnded;
  /** Shutdown's deadline cut the connection. */
  private boolean cutAtDeadline;
  /** The connection ended with answers or responses it could not deliver. */
  private boolean cut;

  public Connection(NetSocket socket, Vertx vertx, RequestHandler handler, FrameEchoOptions options,
                    BufferBudget budget, FrameEchoMetrics metrics, Handler<Connection> closedHandler) {
    this.socket = socket;
    this.vertx = vertx;
    this.handler = handler;
    this.options = options;
    this.budget = budget;
    this.metrics = metrics;
    this.closedHandler = closedHandler;
  }

  /** Wires the rooms; called once, on the event loop, when the connection is accepted. */
  public void start() {
    if (log.isDebugEnabled()) {
      log.debug("new client from {}", remote());
    }
    Context context = vertx.getOrCreateContext();
    channel = ChannelAdapter.attach(socket, context, options.getWriteQueueMaxSize(), this);
    parser = FrameParser.controlling(channel::reading, options.getMaxFrameSize(), this);
    gate = new ReadGate(parser, metrics, this);
    account = new BudgetAccount(budget, context, gate, this);
    writer = new ResponseWriter(channel, account, gate);
    // Echo versus application, decided once: the built-in echo answers with the request's own bytes.
    responses = handler instanceof EchoHandler
      ? new EchoWriter(writer, account, metrics)
      : new OrderedAnswers(handler, options.getHandler().getMaxInFlight(), writer, account, gate, metrics, this);
    timers = new ConnectionTimers(vertx, options, this);
    timers.start();
  }

  private SocketAddress remote() {
    return socket.remoteAddress();
  }

  // ---- handle_read: the socket's events ----

  @Override
  public void bytes(ByteBuf bytes) {
    if (closeRequested) {
      // Read while the close lingers: discarded, never answered.
      bytes.release();
      return;
    }
    account.received(bytes.readableBytes());
    parser.handle(bytes);
    account.readDone();
  }

  @Override
  public void inputEnded() {
    inputEnded = true;
    endIfInputDone();
  }

  @Override
  public void writable() {
    if (gate.isPausedFor(ReadGate.Reason.WRITE_QUEUE_FULL) && !writer.writeQueueFull()) {
      if (!closeRequested) {
        timers.writeDrained();
      }
      gate.resume(ReadGate.Reason.WRITE_QUEUE_FULL);
    }
  }

  @Override
  public void shutdownRequested() {
    closeAfterAnswers(CloseReason.SERVER_SHUTDOWN);
  }

  // ---- try_one_request: the parser's events ----

  @Override
  public void frameStarted() {
    timers.frameStarted();
  }

  @Override
  public void bodyAnnounced(int length) {
    account.bodyAnnounced(length);
  }

  /** A whole request frame, as Netty gave it: the one place where a request is complete. */
  @Override
  public void frame(ByteBuf frame) {
    int held = frame.readableBytes();
    account.frameTaken(held);
    int length = frame.readableBytes() - Frames.HEADER_SIZE;
    if (log.isTraceEnabled()) {
      byte[] start = new byte[Math.min(length, LOGGED_PAYLOAD_BYTES)];
      frame.getBytes(frame.readerIndex() + Frames.HEADER_SIZE, start);
      log.trace("{} client says: len:{} data:{}", remote(), length, new String(start, StandardCharsets.ISO_8859_1));
    }
    timers.requestArrived();
    long receivedNanos = metrics.requestReceived(length);
    if (closeRequested) {
      account.release(held);
      frame.release();
      return;
    }
    responses.request(frame, held, receivedNanos);
    closeIfDone();
  }

  /** Never called: {@link #frame(ByteBuf)} takes every frame without a copy. */
  @Override
  public void frame(Buffer payload) {
    throw new UnsupportedOperationException("frames arrive as Netty buffers");
  }

  @Override
  public void parsed() {
    account.parsed();
    responses.readDone();
  }

  /** A {@link FrameTooLargeException} from the parser, or an IO error from the socket. */
  @Override
  public void failed(Throwable error) {
    if (error instanceof FrameTooLargeException e) {
      metrics.protocolError();
      log.warn("{} protocol error: frame length {} exceeds maxFrameSize {}; closing after the earlier responses",
        remote(), e.length(), e.maxFrameSize());
      closeAfterAnswers(CloseReason.PROTOCOL_ERROR);
    } else {
      if (closeReason == null) {
        closeReason = CloseReason.IO_ERROR;
        ioError = error;
      }
      forceClose();
    }
  }

  @Override
  public void ended() {
    inputEnded();
  }

  // ---- want_read ----

  @Override
  public void paused(ReadGate.Reason reason) {
    timers.readingPaused();
    account.readingPaused(reason);
    if (reason == ReadGate.Reason.WRITE_QUEUE_FULL) {
      timers.writeWaiting();
    }
  }

  @Override
  public void opened() {
    timers.readingResumed();
    account.readingResumed();
    endIfInputDone();
  }

  // ---- answers ----

  @Override
  public void answered() {
    closeIfDone();
  }

  @Override
  public void handlerFailed(Throwable cause) {
    log.warn("{} closing: request handler failed: {}", remote(), cause.toString());
    closeAfterAnswers(CloseReason.HANDLER_FAILED);
  }

  // ---- the clocks ----

  @Override
  public boolean closing() {
    return closeReason != null;
  }

  @Override
  public boolean busy() {
    return responses.awaiting() || !gate.isOpen() || !parser.atFrameBoundary();
  }

  @Override
  public boolean insideFrame() {
    return !parser.atFrameBoundary();
  }

  @Override
  public void idleTimedOut(long idleMs) {
    if (log.isDebugEnabled()) {
      log.debug("{} closing: no request for {} ms (idleTimeoutMs)", remote(), idleMs);
    }
    closeAfterAnswers(CloseReason.IDLE_TIMEOUT);
  }

  @Override
  public void frameTimedOut(long elapsedMs) {
    log.info("{} closing: a frame started {} ms ago is still incomplete after {} bytes (frameTimeoutMs)",
      remote(), elapsedMs, parser.bufferedBytes());
    closeAfterAnswers(CloseReason.FRAME_TIMEOUT);
  }

  @Override
  public void budgetEvicted(long heldBytes, long stalledMs, int waiting, long used, long limit) {
    log.info("{} closing: evicted for the buffer budget: its incomplete frame holds {} bytes and made no progress for {} ms "
        + "while {} connection(s) waited (budgetGraceMs); {} of {} bytes held (maxBufferedBytes)",
      remote(), heldBytes, stalledMs, waiting, used, limit);
    closeAfterAnswers(CloseReason.BUDGET_EVICTED);
  }

  @Override
  public boolean stillStalled() {
    return closeRequested ? !channel.lingering() : gate.isPausedFor(ReadGate.Reason.WRITE_QUEUE_FULL) && writer.writeQueueFull();
  }

  @Override
  public long pendingWriteBytes() {
    return channel.pendingWriteBytes();
  }

  @Override
  public void writeStalled() {
    log.info("{} closing: no response byte read for {} ms (writeStallTimeoutMs)", remote(), timers.writeStallTimeoutMs());
    if (closeReason == null || closeReason == CloseReason.SERVER_SHUTDOWN) {
      closeReason = CloseReason.WRITE_STALL;
    }
    forceClose();
  }

  // ---- want_close ----

  /**
   * After the client's input ended: once everything it sent has been read (reading is not paused, so
   * nothing waits in the socket), the end is decided and the connection closes after its answers.
   */
  private void endIfInputDone() {
    if (inputEnded && closeReason == null && gate.isOpen()) {
      closeAfterAnswers(parser.atFrameBoundary() ? CloseReason.CLIENT_CLOSED : CloseReason.UNEXPECTED_EOF);
    }
  }

  /** The book's {@code want_close}: stop reading now, close once the earlier requests are answered. */
  private void closeAfterAnswers(CloseReason reason) {
    if (closeReason == null) {
      closeReason = reason;
    }
    gate.shut();
    // Nothing more is parsed: what the parser holds is released now, not when a lingering close ends.
    parser.releaseBuffers();
    account.closing();
    closeIfDone();
  }

  private void closeIfDone() {
    if (closeReason != null && !responses.awaiting() && !closeRequested) {
      responses.flush();
      closeRequested = true;
      // The close flushes what is queued first; a peer that never reads must not hold it open for ever.
      timers.writeWaiting();
      channel.closeLingering(options.getLingerTimeoutMs());
    }
  }

  /** Closes at once, dropping whatever is still queued: for a peer that does not read, or a broken socket. */
  private void forceClose() {
    closeRequested = true;
    channel.closeNow();
  }

  /** Cuts a connection that shutdown could not drain in time (one lingering has delivered everything). */
  public void cut() {
    cutAtDeadline = !channel.lingering();
    if (closeReason == null) {
      closeReason = CloseReason.SERVER_SHUTDOWN;
    }
    forceClose();
  }

  @Override
  public void closed() {
    if (closeReason == null) {
      // The socket closed before its end reached the parser.
      closeReason = parser.atFrameBoundary() ? CloseReason.CLIENT_CLOSED : CloseReason.UNEXPECTED_EOF;
    }
    boolean dropped = responses.drop();
    cut = cutAtDeadline || writer.lost() || dropped;
    account.close();
    parser.releaseBuffers();
    timers.cancelAll();
    gate.closed();
    metrics.connectionClosed(closeReason);
    closedHandler.handle(this);
    // Last, so that the line means every count has been settled.
    if (log.isDebugEnabled()) {
      if (ioError == null) {
        log.debug("{} {}", remote(), closeReason);
      } else {
        log.debug("{} {}: {}", remote(), closeReason, ioError.getMessage());
      }
    }
  }

  /** True when the connection ended with answers or responses it could not deliver. */
  public boolean wasCut() {
    return cut;
  }
}
