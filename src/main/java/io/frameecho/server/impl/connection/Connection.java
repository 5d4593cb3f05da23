package io.frameecho.server.impl.connection;

import io.frameecho.protocol.FrameParser;
import io.frameecho.protocol.FramingException;
import io.frameecho.server.CloseReason;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.RequestHandler;
import io.frameecho.server.impl.connection.ReadPause.Reason;
import io.frameecho.server.impl.shared.BudgetAccount;
import io.frameecho.server.impl.shared.BufferBudget;
import io.frameecho.server.impl.shared.LogSummary;
import io.frameecho.server.impl.shared.Ticker;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.vertx.core.Handler;
import io.vertx.core.net.SocketAddress;

import java.io.IOException;
import java.util.concurrent.Executor;

/**
 * One client connection, the book's {@code struct Conn}: {@link #handleRead} takes a read to the {@link FrameParser},
 * which calls {@link #tryOneRequest} for each whole request; {@link #handleWrite} queues the read's answers, and
 * {@link #afterRead} then brings the frame clock, a shutdown's wait and the budget up to date. {@code want_read} is
 * {@link ReadPause#wantRead}, {@code want_close} is {@link #wantClose} (or {@link #cut} at once), with the first
 * {@link CloseReason} winning, whether it comes from the traffic, the {@link ConnectionTimers}, the budget or shutdown.
 * Everything runs on the connection's event loop.
 */
public final class Connection implements ConnectionSocket.Events, FrameParser.Listener, OrderedAnswers.Listener,
  ConnectionTimers.Events, BudgetAccount.Owner {

  /**
   * The longest a connection that owes nothing lingers when closed: it holds the stop, and what its client sent across
   * the FIN is read rather than answered by a reset.
   */
  static final long IDLE_LINGER_MS = 1000;
  /** How long after accept a silent connection may still send a first request once shutdown began, to be answered. */
  static final long FIRST_REQUEST_GRACE_MS = 500;

  /** What a connection found reading at shutdown waits for before it closes. */
  private enum ShutdownWait {
    NONE,
    /** Accepted within {@link #FIRST_REQUEST_GRACE_MS}, nothing read yet: its first requests. */
    FIRST_REQUEST,
    /** A frame under way: that frame, whole. */
    REQUEST_UNDER_WAY
  }

  private final FrameEchoOptions options;
  private final FrameEchoMetrics metrics;
  private final ConnectionLog log;
  private final int messageOffset;
  private final Handler<Connection> closedHandler;
  private final ActivityOrder order;
  final ActivityOrder.Place place = new ActivityOrder.Place(this);

  // Built in start().
  ConnectionSocket socket;
  private FrameParser parser;
  private BudgetAccount account;
  private ResponseWriter writer;
  private Responses responses;
  private ConnectionTimers timers;
  ReadPause reading;

  /** Frames handed over since the last {@link #afterRead}, and whether a frame was under way then. */
  private int framesSinceSettled;
  private boolean frameUnderWay;
  private CloseState close = CloseState.OPEN;
  /** The client shut down its sending side: answer what it sent, then close. */
  private boolean inputEnded;
  private boolean receivedBytes;
  private ShutdownWait shutdownWait = ShutdownWait.NONE;

  Connection(SocketAddress remote, FrameEchoOptions options, FrameEchoMetrics metrics, LogSummary logs,
             ActivityOrder order, Handler<Connection> closedHandler) {
    this.order = order;
    this.options = options;
    this.metrics = metrics;
    this.messageOffset = options.getFraming().messageOffset();
    this.log = new ConnectionLog(remote, logs, messageOffset);
    this.closedHandler = closedHandler;
  }

  /** Accepts a connection on the caller's event loop; {@code loop} runs its later tasks there. */
  public static Connection accept(AcceptedSocket accepted, Executor loop, RequestHandler handler, FrameEchoOptions options,
                                  BufferBudget budget, FrameEchoMetrics metrics, LogSummary logs, Ticker ticker,
                                  ActivityOrder order, Handler<Connection> closedHandler) {
    Connection connection = new Connection(accepted.remoteAddress(), options, metrics, logs, order, closedHandler);
    connection.log.newClient();
    ConnectionSocket socket = accepted.attach(connection, connection::readCap);
    connection.start(socket, handler, budget, loop, ticker);
    accepted.deliverEarlyReads(connection);
    return connection;
  }

  /** Builds the parts; once, on the event loop. */
  void start(ConnectionSocket socket, RequestHandler handler, BufferBudget budget, Executor loop, Ticker ticker) {
    this.socket = socket;
    parser = FrameParser.controlling(socket, options.getFraming(), options.getMaxFrameSize(), this);
    account = new BudgetAccount(budget, loop, this);
    writer = new ResponseWriter(socket, account, log, options.getFraming());
    responses = handler instanceof EchoHandler
      ? new EchoWriter(writer, account, metrics)
      : new OrderedAnswers(handler, options.getHandler().getMaxInFlight(), writer, account, metrics, this, loop);
    timers = new ConnectionTimers(ticker, options, this);
    reading = new ReadPause(parser, metrics, timers, account, log);
    timers.start();
    order.join(place);
  }

  /** The most the socket's next read may take, under the budget; asked before each read. */
  int readCap() {
    return account.readCap(BudgetAccount.SMALL_READ);
  }

  /**
   * Lets a read of a large frame land in the frame's memory ({@link FrameParser#landingFor}) instead of being copied,
   * once the budget admitted the frame whole: memory set aside ahead of the bytes is then already counted.
   */
  @Override
  public ByteBuf readInto(ByteBufAllocator alloc, int guess) {
    return !account.frameAdmitted() || close.decided() ? null : parser.landingFor(alloc, guess, readCap());
  }

  /** The socket read {@code bytes}: {@link #handleRead}. */
  @Override
  public void bytes(ByteBuf bytes) {
    handleRead(bytes);
  }

  /**
   * {@code handle_read}: the parser takes the read and calls {@link #tryOneRequest} for each whole request in it; then
   * {@link #afterRead}. The budget counts the bytes as held before they are parsed, since an answer may exchange them.
   */
  void handleRead(ByteBuf bytes) {
    if (close.decided()) {
      // Once closing, nothing is parsed: lingering bytes are discarded, never answered.
      if (bytes.isReadable()) {
        close = close.requestReached();
      }
      bytes.release();
      return;
    }
    if (!reading.wantRead() && socket.resetByPeer()) {
      // On a reset, epoll reads even while reading is paused; nobody is left to answer, so none of it is held.
      bytes.release();
      failed(new IOException("connection reset by peer while the server had paused reading it"));
      return;
    }
    receivedBytes = true;
    account.received(bytes.readableBytes());
    order.touch(place);
    parser.handle(bytes);
    afterRead();
  }

  /** A whole request frame from the parser: {@link #tryOneRequest}. */
  @Override
  public void frame(ByteBuf frame) {
    tryOneRequest(frame);
  }

  /**
   * The end of {@code try_one_request}: the one place a request is complete (the parser found it). The answer is the
   * {@link Responses}' to make; their slots or the write queue full, reading stops.
   */
  private void tryOneRequest(ByteBuf frame) {
    int held = frame.readableBytes();
    framesSinceSettled++;
    log.frameComplete(frame);
    timers.requestArrived();
    long receivedNanos = metrics.requestReceived(held - messageOffset);
    if (responses.request(frame, held, receivedNanos)) {
      stopReadingIfFull();
    }
  }

  /**
   * {@code handle_write}: the read's answers join the socket's write queue, which Vert.x flushes at the end of the read
   * (Netty's flush is the book's {@code write()}); over {@code writeQueueMaxSize}, reading stops until {@link #writable}.
   */
  private void handleWrite() {
    if (responses.readDone()) {
      stopReadingIfFull();
    }
  }

  /** After a read (or a resume): {@link #handleWrite}, then the frame clock, a shutdown's wait and the budget. */
  private void afterRead() {
    if (close.decided()) {
      return;
    }
    handleWrite();
    boolean completed = framesSinceSettled != 0;
    framesSinceSettled = 0;
    long buffered = parser.bufferedBytes();
    boolean underWay = buffered != 0;
    if (underWay && (completed || !frameUnderWay)) {
      timers.frameStarted();
    }
    frameUnderWay = underWay;
    // What shutdown waited for has arrived. A frame begun after the awaited first request counts as lost, so a client
    // that keeps pipelining cannot hold the shutdown.
    if (shutdownWait == ShutdownWait.REQUEST_UNDER_WAY ? completed
      : shutdownWait == ShutdownWait.FIRST_REQUEST && completed && !underWay) {
      wantClose(CloseReason.SERVER_SHUTDOWN);
      return;
    }
    if (account.settle(buffered, underWay ? parser.announcedFrameSize() : 0, completed)) {
      reading.pauseFor(Reason.OVER_BUFFER_BUDGET);
    }
  }

  @Override
  public void inputEnded() {
    inputEnded = true;
    endIfInputDone();
  }

  /** The write queue went below its low-water mark: the end of {@code handle_write}, reading may resume. */
  @Override
  public void writable() {
    if (reading.isPausedFor(Reason.WRITE_QUEUE_FULL) && !writer.writeQueueFull()) {
      if (!close.stage().closeAsked()) {
        timers.writeDrained();
      }
      resumeReading(Reason.WRITE_QUEUE_FULL);
    }
  }

  /**
   * Closes at once if the connection owes nothing, else after its answers. A request on its way is not lost: a new
   * silent connection waits {@link #FIRST_REQUEST_GRACE_MS} for it, one with a frame under way reads it whole; the frame
   * timeout and the deadline ({@link #cut()}) bound the wait.
   */
  @Override
  public void shutdownRequested() {
    if (close.decided() || shutdownWait != ShutdownWait.NONE) {
      return;
    }
    if (!receivedBytes && timers.awaitFirstRequest(FIRST_REQUEST_GRACE_MS, place.joinedNanos)) {
      shutdownWait = ShutdownWait.FIRST_REQUEST;
    } else if (!parser.atFrameBoundary()) {
      shutdownWait = ShutdownWait.REQUEST_UNDER_WAY;
    } else {
      closeForShutdown(owesNothing());
    }
  }

  @Override
  public void firstRequestGraceOver() {
    if (!close.decided() && !receivedBytes) {
      closeForShutdown(owesNothing());
    }
  }

  /** Shutdown: {@code owingNothing}, at once; owing answers, after them (the drain). */
  private void closeForShutdown(boolean owingNothing) {
    if (owingNothing) {
      close = close.decideIdle();
    }
    wantClose(CloseReason.SERVER_SHUTDOWN);
  }

  /** A {@link FramingException} from the parser, or an IO error from the socket. */
  @Override
  public void failed(Throwable error) {
    if (error instanceof FramingException e) {
      metrics.protocolError();
      log.protocolError(e);
      wantClose(CloseReason.PROTOCOL_ERROR);
    } else {
      if (!close.decided()) {
        log.wantClose(CloseReason.IO_ERROR, false);
      }
      close = close.decideIoError(error);
      forceClose();
    }
  }

  /** Reading stops when the write queue or the answer slots are full. */
  private void stopReadingIfFull() {
    if (writer.queueFilled()) {
      reading.pauseFor(Reason.WRITE_QUEUE_FULL);
    }
    if (responses.full()) {
      reading.pauseFor(Reason.TOO_MANY_IN_FLIGHT);
    }
  }

  /** Frames held while paused are handed over before the socket is read again. */
  void resumeReading(Reason reason) {
    if (reading.resumeFrom(reason)) {
      afterRead();
      endIfInputDone();
    }
  }

  @Override
  public void answered() {
    order.touch(place);
    stopReadingIfFull();
    if (!responses.full()) {
      resumeReading(Reason.TOO_MANY_IN_FLIGHT);
    }
    closeIfDone();
  }

  @Override
  public void handlerFailed(Throwable cause) {
    log.handlerFailed(cause);
    wantClose(CloseReason.HANDLER_FAILED);
  }

  CloseState closeState() {
    return close;
  }

  /** Not idle while an answer is awaited, reading is paused or a frame is under way. */
  @Override
  public boolean idle(long idleMs) {
    if (close.decided()) {
      return true;
    }
    if (responses.awaiting() || !reading.wantRead() || !parser.atFrameBoundary()) {
      return false;
    }
    log.idle(idleMs);
    wantClose(CloseReason.IDLE_TIMEOUT);
    return true;
  }

  @Override
  public long pendingWriteBytes() {
    return socket.pendingWriteBytes();
  }

  @Override
  public void frameTimedOut(long elapsedMs) {
    if (!close.decided() && !parser.atFrameBoundary()) {
      log.frameTimedOut(elapsedMs, parser.bufferedBytes());
      wantClose(CloseReason.FRAME_TIMEOUT);
    }
  }

  @Override
  public void writeStalled() {
    if (writeStalledNow()) {
      log.writeStalled(options.getWriteStallTimeoutMs());
      cut(CloseReason.WRITE_STALL);
    }
  }

  /** Not cut, and the client takes no response: the write queue is full, or a close waits to flush. */
  private boolean writeStalledNow() {
    CloseState.Stage stage = close.stage();
    return !stage.cut() && (stage.closeAsked() ? !socket.lingering()
      : reading.isPausedFor(Reason.WRITE_QUEUE_FULL) && writer.writeQueueFull());
  }

  @Override
  public void budgetHasRoom() {
    resumeReading(Reason.OVER_BUFFER_BUDGET);
  }

  @Override
  public void budgetEvicted(long heldBytes, long stalledMs, int waiting, long used, long limit) {
    log.budgetEvicted(heldBytes, stalledMs, waiting, used, limit);
    wantClose(CloseReason.BUDGET_EVICTED);
  }

  /**
   * The budget is spent and others wait: a client sent nothing for a quarter of {@code writeStallTimeoutMs} (at least
   * {@code graceMs}) while responses wait is cut now, rather than hold the budget until its write stall.
   */
  @Override
  public void evictIfNotReading(long graceMs, int waiting, long used, long limit) {
    long writeStallTimeoutMs = options.getWriteStallTimeoutMs();
    if (writeStallTimeoutMs == 0 || !writeStalledNow()) {
      return;
    }
    long stalledMs = timers.msSentNothing(socket.msSinceDataSent());
    if (stalledMs >= 0 && stalledMs >= Math.max(graceMs, writeStallTimeoutMs / 4)) {
      log.nonReaderEvicted(stalledMs, waiting, used, limit);
      cut(CloseReason.BUDGET_EVICTED);
    }
  }

  /** Closes at once for {@code reason}, overruling a shutdown's: the responses held cannot reach the client. */
  void cut(CloseReason reason) {
    close = close.overrulingShutdown(reason);
    log.wantClose(close.reason(), false);
    forceClose();
  }

  /** Once the client's input ended and all of it was read, the end is decided. */
  private void endIfInputDone() {
    if (inputEnded && !close.decided() && reading.wantRead()) {
      wantClose(parser.atFrameBoundary() ? CloseReason.CLIENT_CLOSED : CloseReason.UNEXPECTED_EOF);
    }
  }

  /** {@code want_close}: stops reading now and closes once the earlier requests are answered. */
  void wantClose(CloseReason reason) {
    if (!close.decided()) {
      log.wantClose(reason, true);
    }
    // A frame half-read is discarded, and counted lost.
    close = parser.atFrameBoundary() ? close.decide(reason) : close.decide(reason).requestReached();
    reading.stopForGood();
    order.remove(place);
    // Released now, not when a lingering close ends.
    account.closing(parser.bufferedBytes());
    parser.releaseBuffers();
    closeIfDone();
  }

  private void closeIfDone() {
    if (close.decided() && !responses.awaiting() && !close.stage().closeAsked()) {
      responses.flush();
      close = close.closeAsked();
      // A peer that never reads must not hold the close open for ever.
      if (socket.pendingWriteBytes() != 0) {
        timers.writeWaiting();
      }
      long lingerMs = options.getLingerTimeoutMs();
      if (close.idle()) {
        socket.closeOwingNothing(Math.min(lingerMs, IDLE_LINGER_MS));
      } else {
        socket.closeLingering(close.reason() == CloseReason.IDLE_EVICTED ? Math.min(lingerMs, IDLE_LINGER_MS) : lingerMs);
      }
    }
  }

  /** Closes at once, dropping what is queued. */
  private void forceClose() {
    close = close.cut();
    socket.closeNow();
  }

  /**
   * Cuts a connection shutdown could not drain in time; only a cut before its FIN loses what it owed. One waiting only
   * for a request under way (or a first request) closes owing nothing instead, so that request counts as lost, not as
   * a cut.
   */
  public void cut() {
    if (shutdownWait != ShutdownWait.NONE && !close.decided() && !responses.awaiting() && socket.pendingWriteBytes() == 0) {
      closeForShutdown(true);
      return;
    }
    boolean undelivered = !socket.lingering();
    close = close.decide(CloseReason.SERVER_SHUTDOWN);
    log.wantClose(close.reason(), false);
    close = undelivered ? close.cutAtDeadline() : close.cut();
    socket.closeNow();
  }

  @Override
  public void closed() {
    if (!close.decided()) {
      // The socket closed before its end reached the parser.
      close = close.decide(parser.atFrameBoundary() ? CloseReason.CLIENT_CLOSED : CloseReason.UNEXPECTED_EOF);
    }
    boolean dropped = responses.drop();
    close = close.ended(writer.lost() || dropped, socket.handedOver() && !dropped);
    close.losses().forEach(metrics::requestLost);
    account.close(parser.bufferedBytes());
    parser.releaseBuffers();
    order.remove(place);
    timers.cancelAll();
    reading.closed();
    metrics.connectionClosed(close.reason());
    closedHandler.handle(this);
    log.closed(close.reason(), close.ioError());
  }

  /** A shutdown close with every answer written and nothing dropped: the socket may move to a successor. */
  @Override
  public boolean handOverAllowed() {
    return close.reason() == CloseReason.SERVER_SHUTDOWN && !close.requestLost() && !close.stage().cut()
      && !responses.awaiting() && !inputEnded;
  }

  /** Whether the connection is idle: not closing, nothing owed, read or queued, reading open. */
  @Override
  public boolean owesNothing() {
    return reading.wantRead() && owesNothingEvenIfPaused();
  }

  /** Owes nothing, whether or not reading is paused. */
  boolean owesNothingEvenIfPaused() {
    return !close.decided() && !responses.awaiting() && parser.atFrameBoundary() && socket.pendingWriteBytes() == 0;
  }

  /** How it ended; null while it has not. */
  public CloseState.Ending ending() {
    return close.ending();
  }
}
