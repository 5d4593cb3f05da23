package io.frameecho.server.impl;

import io.frameecho.protocol.FrameParser;
import io.frameecho.protocol.FrameTooLargeException;
import io.frameecho.protocol.Frames;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.EchoHandler;
import io.frameecho.server.RequestHandler;
import io.netty.buffer.ByteBuf;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * One client connection: the book's {@code Conn}, and the event-loop half of its {@code handle_read},
 * {@code handle_write} and {@code want_read}/{@code want_write}/{@code want_close}.
 * <ul>
 *   <li>{@link #frame} is {@code try_one_request} after parsing: it hands the payload to the application
 *   and queues the answer;</li>
 *   <li>{@link #releaseAnswered} and {@link #writeResponse} (for echo, {@link #writeEchoRun}) are
 *   {@code handle_write}: answers go to the socket's write queue, which stands in for
 *   {@code Conn::outgoing}, in request order;</li>
 *   <li>{@link #stopReading}/{@link #startReading} are {@code want_read} turning off and on: reading stops
 *   while the write queue is full, while {@code maxInFlight} answers are awaited, or while the process's
 *   buffer budget is spent, and starts again when every reason has cleared;</li>
 *   <li>{@link #closeAfterAnswers} is {@code want_close}; {@link #forceClose} closes without flushing,
 *   for a peer that does not read.</li>
 * </ul>
 * Every limit and timeout hooks into these few decision points. Everything runs on the connection's event
 * loop, except the budget's wake-up, which hops back onto it.
 */
public final class Connection implements FrameParser.Listener, ChannelAdapter.Events {

  private static final Logger log = LoggerFactory.getLogger(Connection.class);
  private static final int LOGGED_PAYLOAD_BYTES = 100;

  /** Reading stops while the write queue is over its high-water mark, ... */
  private static final int WRITE_QUEUE_FULL = 1;
  /** ... while {@code maxInFlight} answers are awaited, ... */
  private static final int TOO_MANY_IN_FLIGHT = 2;
  /** ... or while the process-wide buffer budget cannot hold the next frame's body. */
  private static final int OVER_BUFFER_BUDGET = 4;

  /** An answer the application has not given yet, with the request bytes it holds in the budget. */
  private record Awaited(Future<Buffer> answer, int requestBytes, long receivedNanos) {
  }

  private final NetSocket socket;
  private final Vertx vertx;
  private final RequestHandler handler;
  /** The built-in echo: answered from the request's own bytes. */
  private final boolean echo;
  private final FrameEchoOptions options;
  private final BufferBudget budget;
  private final FrameEchoMetrics metrics;
  private final Handler<Connection> closedHandler;
  private Context context;
  private ChannelAdapter channel;
  private FrameParser parser;

  /** Answers not yet written, oldest first; stays empty while answers complete at once (echo). */
  private final ArrayDeque<Awaited> awaited = new ArrayDeque<>();
  /** Why reading is paused, one bit per reason; the book's {@code want_read} is this being zero. */
  private int readingStoppedFor;
  /** Echo responses not written yet: the first request frame of a run, the run's length and its budget. */
  private ByteBuf echoRun;
  private int echoRunBytes;
  private int echoRunReserved;
  /** Budget held for the body being read, and the length of one waiting for budget. */
  private int bodyReservation;
  private int bodyAwaitingBudget;

  /** The book's {@code want_close}, with its reason: the first reason wins. */
  private CloseReason closeReason;
  private Throwable ioError;
  private boolean closeRequested;
  /** The client shut down its sending side (or closed): answer what it sent, then close. */
  private boolean inputEnded;
  /** A response could not be written: the connection was cut rather than drained. */
  private boolean responsesLost;
  private boolean cut;

  private long lastRequestNanos;
  private long frameStartedNanos;
  private long idleTimer = -1;
  private long frameTimer = -1;
  private long writeTimer = -1;

  public Connection(NetSocket socket, Vertx vertx, RequestHandler handler, FrameEchoOptions options,
                    BufferBudget budget, FrameEchoMetrics metrics, Handler<Connection> closedHandler) {
    this.socket = socket;
    this.vertx = vertx;
    this.handler = handler;
    this.echo = handler instanceof EchoHandler;
    this.options = options;
    this.budget = budget;
    this.metrics = metrics;
    this.closedHandler = closedHandler;
  }

  /** Wires the socket's events; called once, on the event loop, when the connection is accepted. */
  public void start() {
    if (log.isDebugEnabled()) {
      log.debug("new client from {}", socket.remoteAddress());
    }
    context = vertx.getOrCreateContext();
    channel = ChannelAdapter.attach(socket, context, options.getWriteQueueMaxSize(), this);
    parser = FrameParser.controlling(channel::reading, options.getMaxFrameSize(), this);
    if (options.getIdleTimeoutMs() > 0) {
      lastRequestNanos = System.nanoTime();
      idleTimer = vertx.setTimer(options.getIdleTimeoutMs(), this::onIdleTimer);
    }
  }

  // ---- the socket's events ----

  @Override
  public void bytes(ByteBuf bytes) {
    parser.handle(bytes);
  }

  @Override
  public void inputEnded() {
    onInputEnded();
  }

  @Override
  public void writable() {
    onWriteQueueDrained();
  }

  @Override
  public void shutdownRequested() {
    closeAfterAnswers(CloseReason.SERVER_SHUTDOWN);
  }

  @Override
  public void closed() {
    onClosed();
  }

  /** The book's {@code Conn::outgoing} over its limit: more than {@code writeQueueMaxSize} bytes wait to be written. */
  private boolean writeQueueFull() {
    return channel.writeQueueFull();
  }

  // ---- reading: the parser's events ----

  @Override
  public void frameStarted() {
    if (options.getFrameTimeoutMs() > 0) {
      frameStartedNanos = System.nanoTime();
      if (frameTimer < 0) {
        frameTimer = vertx.setTimer(options.getFrameTimeoutMs(), this::onFrameTimer);
      }
    }
  }

  @Override
  public void bodyAnnounced(int length) {
    if (budget.tryReserve(length)) {
      bodyReservation = length;
    } else {
      bodyAwaitingBudget = length;
      stopReading(OVER_BUFFER_BUDGET);
      budget.whenReleased(() -> context.runOnContext(v -> retryBudget()));
    }
  }

  private void retryBudget() {
    if (bodyAwaitingBudget == 0 || closeReason != null) {
      return;
    }
    if (budget.tryReserve(bodyAwaitingBudget)) {
      bodyReservation = bodyAwaitingBudget;
      bodyAwaitingBudget = 0;
      startReading(OVER_BUFFER_BUDGET);
    } else {
      budget.whenReleased(() -> context.runOnContext(v -> retryBudget()));
    }
  }

  /**
   * A whole frame as Netty gave it. For echo, the request frame is the response frame: it goes back without
   * a copy (see {@link #addToEchoRun}). Other applications get the payload in a buffer of their own.
   */
  @Override
  public void frame(ByteBuf frame) {
    if (!echo) {
      FrameParser.Listener.super.frame(frame);
      return;
    }
    int requestBytes = bodyReservation;
    bodyReservation = 0;
    int length = frame.readableBytes() - Frames.HEADER_SIZE;
    if (log.isTraceEnabled()) {
      byte[] start = new byte[Math.min(length, LOGGED_PAYLOAD_BYTES)];
      frame.getBytes(frame.readerIndex() + Frames.HEADER_SIZE, start);
      traceRequest(length, start);
    }
    long receivedNanos = requestArrived(length);
    if (closeRequested) {
      budget.release(requestBytes);
      frame.release();
      return;
    }
    addToEchoRun(frame, requestBytes);
    metrics.responseQueued(receivedNanos);
    closeIfDone();
  }

  /**
   * The request frame is the response frame, header included. Frames that lie one after the other in the
   * same read go back as one slice of it, in one write, at the end of the read.
   */
  private void addToEchoRun(ByteBuf frame, int requestBytes) {
    if (echoRun != null && followsEchoRun(frame)) {
      echoRunBytes += frame.readableBytes();
      echoRunReserved += requestBytes;
      frame.release();
      return;
    }
    writeEchoRun();
    echoRun = frame;
    echoRunBytes = frame.readableBytes();
    echoRunReserved = requestBytes;
  }

  /** Whether {@code frame} starts where the run ends, in the same buffer (so the run can grow over it). */
  private boolean followsEchoRun(ByteBuf frame) {
    ByteBuf buffer = echoRun.unwrap();
    return buffer != null && buffer == frame.unwrap() && buffer.hasMemoryAddress() && frame.hasMemoryAddress()
      && echoRun.memoryAddress() + echoRunBytes == frame.memoryAddress();
  }

  /** The book's {@code handle_write} for echo: the run joins the write queue; its budget is held until written. */
  private void writeEchoRun() {
    ByteBuf run = echoRun;
    if (run == null) {
      return;
    }
    echoRun = null;
    if (echoRunBytes != run.readableBytes()) {
      ByteBuf buffer = run.unwrap();
      ByteBuf whole = buffer.retainedSlice((int) (run.memoryAddress() - buffer.memoryAddress()), echoRunBytes);
      run.release();
      run = whole;
    }
    int reserved = echoRunReserved;
    if (reserved > 0) {
      channel.write(run).onComplete(ar -> {
        budget.release(reserved);
        if (ar.failed()) {
          responsesLost = true;
        }
      });
    } else {
      channel.write(run);
    }
    if (writeQueueFull()) {
      stopReading(WRITE_QUEUE_FULL);
    }
  }

  /** Drops a run that can no longer be written (the connection closed). */
  private void dropEchoRun() {
    if (echoRun != null) {
      echoRun.release();
      echoRun = null;
      budget.release(echoRunReserved);
    }
  }

  @Override
  public void parsed() {
    writeEchoRun();
  }

  @Override
  public void frame(Buffer payload) {
    int requestBytes = bodyReservation;
    bodyReservation = 0;
    if (log.isTraceEnabled()) {
      traceRequest(payload.length(), payload.getBytes(0, Math.min(payload.length(), LOGGED_PAYLOAD_BYTES)));
    }
    long receivedNanos = requestArrived(payload.length());
    Future<Buffer> answer;
    try {
      answer = handler.handle(payload);
    } catch (RuntimeException e) {
      answer = Future.failedFuture(e);
    }
    if (awaited.isEmpty() && answer.isComplete()) {
      release(answer, requestBytes, receivedNanos);
      closeIfDone();
    } else {
      awaited.add(new Awaited(answer, requestBytes, receivedNanos));
      if (awaited.size() >= options.getHandler().getMaxInFlight()) {
        stopReading(TOO_MANY_IN_FLIGHT);
      }
      answer.onComplete(ar -> releaseAnswered());
    }
  }

  @Override
  public void failed(Throwable error) {
    if (error instanceof FrameTooLargeException e) {
      metrics.protocolError();
      log.warn("{} protocol error: frame length {} exceeds maxFrameSize {}; closing after the earlier responses",
        socket.remoteAddress(), e.length(), e.maxFrameSize());
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
    onInputEnded();
  }

  private void onInputEnded() {
    inputEnded = true;
    endIfInputDone();
  }

  /**
   * After the client's input ended: once everything it sent has been read (reading is not paused, so
   * nothing waits in the socket), the end is decided and the connection closes after its answers.
   */
  private void endIfInputDone() {
    if (inputEnded && closeReason == null && readingStoppedFor == 0) {
      closeAfterAnswers(parser.atFrameBoundary() ? CloseReason.CLIENT_CLOSED : CloseReason.UNEXPECTED_EOF);
    }
  }

  // ---- writing: answers in request order ----

  /** Writes every answer at the head of the queue that has completed, stopping at the first pending one. */
  private void releaseAnswered() {
    Awaited head;
    while ((head = awaited.peek()) != null && head.answer.isComplete()) {
      awaited.poll();
      release(head.answer, head.requestBytes, head.receivedNanos);
    }
    if (awaited.size() < options.getHandler().getMaxInFlight()) {
      startReading(TOO_MANY_IN_FLIGHT);
    }
    closeIfDone();
  }

  private void release(Future<Buffer> answer, int requestBytes, long receivedNanos) {
    budget.release(requestBytes);
    if (answer.succeeded()) {
      writeResponse(answer.result());
      metrics.responseQueued(receivedNanos);
    } else {
      // Answers queued behind a failed one are dropped: the connection ends after what came before.
      Awaited dropped;
      while ((dropped = awaited.poll()) != null) {
        budget.release(dropped.requestBytes);
      }
      log.warn("{} closing: request handler failed: {}", socket.remoteAddress(), answer.cause().toString());
      closeAfterAnswers(CloseReason.HANDLER_FAILED);
    }
  }

  private void writeResponse(Buffer payload) {
    if (closeRequested) {
      return;
    }
    int length = payload.length();
    socket.write(Frames.header(length));
    if (length > 0) {
      budget.reserve(length);
      socket.write(payload).onComplete(ar -> {
        budget.release(length);
        if (ar.failed()) {
          responsesLost = true;
        }
      });
    }
    if (writeQueueFull()) {
      stopReading(WRITE_QUEUE_FULL);
    }
  }

  /** Netty's channel or Vert.x's queue drained; read again once both have. */
  private void onWriteQueueDrained() {
    if ((readingStoppedFor & WRITE_QUEUE_FULL) == 0 || writeQueueFull()) {
      return;
    }
    if (!closeRequested) {
      cancelWriteTimer();
    }
    startReading(WRITE_QUEUE_FULL);
  }

  // ---- want_read ----

  private void stopReading(int reason) {
    if (readingStoppedFor == 0) {
      parser.pause();
      metrics.readingPaused();
    }
    readingStoppedFor |= reason;
    if (reason == WRITE_QUEUE_FULL && writeTimer < 0 && options.getWriteStallTimeoutMs() > 0) {
      writeTimer = vertx.setTimer(options.getWriteStallTimeoutMs(), this::onWriteStall);
    }
  }

  private void startReading(int reason) {
    if ((readingStoppedFor & reason) == 0) {
      return;
    }
    readingStoppedFor &= ~reason;
    if (readingStoppedFor == 0) {
      metrics.readingResumed();
      if (closeReason == null) {
        parser.resume();
        endIfInputDone();
      }
    }
  }

  // ---- timeouts ----

  private void onIdleTimer(long id) {
    idleTimer = -1;
    if (closeReason != null) {
      return;
    }
    long timeout = options.getIdleTimeoutMs();
    long idleMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastRequestNanos);
    boolean busy = !awaited.isEmpty() || readingStoppedFor != 0 || !parser.atFrameBoundary();
    if (busy || idleMs < timeout) {
      idleTimer = vertx.setTimer(busy ? timeout : timeout - idleMs, this::onIdleTimer);
      return;
    }
    if (log.isDebugEnabled()) {
      log.debug("{} closing: no request for {} ms (idleTimeoutMs)", socket.remoteAddress(), idleMs);
    }
    closeAfterAnswers(CloseReason.IDLE_TIMEOUT);
  }

  private void onFrameTimer(long id) {
    frameTimer = -1;
    if (closeReason != null || parser.atFrameBoundary()) {
      return;
    }
    long timeout = options.getFrameTimeoutMs();
    if (readingStoppedFor != 0) {
      // Not reading is the server's choice, not the client's slowness.
      frameTimer = vertx.setTimer(timeout, this::onFrameTimer);
      return;
    }
    long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - frameStartedNanos);
    if (elapsedMs < timeout) {
      frameTimer = vertx.setTimer(timeout - elapsedMs, this::onFrameTimer);
      return;
    }
    log.info("{} closing: a frame started {} ms ago is still incomplete after {} bytes (frameTimeoutMs)",
      socket.remoteAddress(), elapsedMs, parser.bufferedBytes());
    closeAfterAnswers(CloseReason.FRAME_TIMEOUT);
  }

  /** The write queue stayed full, or a close could not flush, for {@code writeStallTimeoutMs}. */
  private void onWriteStall(long id) {
    writeTimer = -1;
    if (closeRequested || (readingStoppedFor & WRITE_QUEUE_FULL) != 0 && writeQueueFull()) {
      log.info("{} closing: responses not read for {} ms (writeStallTimeoutMs)", socket.remoteAddress(),
        options.getWriteStallTimeoutMs());
      if (closeReason == null || closeReason == CloseReason.SERVER_SHUTDOWN) {
        closeReason = CloseReason.WRITE_STALL;
      }
      forceClose();
    }
  }

  private void cancelWriteTimer() {
    if (writeTimer >= 0) {
      vertx.cancelTimer(writeTimer);
      writeTimer = -1;
    }
  }

  // ---- want_close ----

  /** The book's {@code want_close}: stop reading now, close once the earlier requests are answered. */
  private void closeAfterAnswers(CloseReason reason) {
    if (closeReason == null) {
      closeReason = reason;
    }
    parser.pause();
    closeIfDone();
  }

  private void closeIfDone() {
    if (closeReason != null && awaited.isEmpty() && !closeRequested) {
      writeEchoRun();
      closeRequested = true;
      // close() flushes what is queued first; a peer that never reads must not hold it open for ever.
      if (writeTimer < 0 && options.getWriteStallTimeoutMs() > 0) {
        writeTimer = vertx.setTimer(options.getWriteStallTimeoutMs(), this::onWriteStall);
      }
      channel.closeAfterFlush();
    }
  }

  /** Closes at once, dropping whatever is still queued: for a peer that does not read, or a broken socket. */
  public void forceClose() {
    closeRequested = true;
    channel.closeNow();
  }

  /** Cuts a connection that shutdown could not drain in time. */
  public void cut() {
    cut = true;
    if (closeReason == null) {
      closeReason = CloseReason.SERVER_SHUTDOWN;
    }
    forceClose();
  }

  private void onClosed() {
    if (closeReason == null) {
      // The socket closed before its end reached the parser.
      closeReason = parser.atFrameBoundary() ? CloseReason.CLIENT_CLOSED : CloseReason.UNEXPECTED_EOF;
    }
    cut |= responsesLost || !awaited.isEmpty();
    Awaited dropped;
    while ((dropped = awaited.poll()) != null) {
      budget.release(dropped.requestBytes);
    }
    budget.release(bodyReservation);
    bodyReservation = 0;
    dropEchoRun();
    parser.releaseBuffers();
    bodyAwaitingBudget = 0;
    cancelTimers();
    if (readingStoppedFor != 0) {
      readingStoppedFor = 0;
      metrics.readingResumed();
    }
    metrics.connectionClosed(closeReason);
    closedHandler.handle(this);
    // Last, so that the line means every count has been settled.
    if (log.isDebugEnabled()) {
      if (ioError == null) {
        log.debug("{} {}", socket.remoteAddress(), closeReason);
      } else {
        log.debug("{} {}: {}", socket.remoteAddress(), closeReason, ioError.getMessage());
      }
    }
  }

  private void cancelTimers() {
    for (long id : new long[] {idleTimer, frameTimer, writeTimer}) {
      if (id >= 0) {
        vertx.cancelTimer(id);
      }
    }
    idleTimer = frameTimer = writeTimer = -1;
  }

  /** True when the connection ended with answers or responses it could not deliver. */
  public boolean wasCut() {
    return cut;
  }

  /** A request frame is complete: the idle clock restarts and metrics count it. */
  private long requestArrived(int length) {
    if (options.getIdleTimeoutMs() > 0) {
      lastRequestNanos = System.nanoTime();
    }
    return metrics.requestReceived(length);
  }

  /** The book's per-request line, with the payload's first bytes. */
  private void traceRequest(int length, byte[] start) {
    log.trace("{} client says: len:{} data:{}", socket.remoteAddress(), length, new String(start, StandardCharsets.ISO_8859_1));
  }
}
