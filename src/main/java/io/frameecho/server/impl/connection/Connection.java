package io.frameecho.server.impl.connection;

import io.frameecho.protocol.FrameParser;
import io.frameecho.protocol.FramingException;
import io.frameecho.server.CloseReason;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.RequestHandler;
import io.frameecho.server.impl.connection.ReadGate.Reason;
import io.frameecho.server.impl.shared.BudgetAccount;
import io.frameecho.server.impl.shared.BufferBudget;
import io.frameecho.server.impl.shared.ConnectionLogs;
import io.frameecho.server.impl.shared.Ticker;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.vertx.core.Handler;
import io.vertx.core.net.SocketAddress;

import java.io.IOException;
import java.util.concurrent.Executor;

/**
 * One client connection: the book's {@code Conn}. Control runs one way through it:
 * <pre>
 *  socket ─▶ {@link #bytes} ─▶ {@link FrameParser} ─frame─▶ {@link #frame} ─▶ {@link Responses} ─▶ {@link ResponseWriter} ─▶ socket
 *            (handle_read)     (try_one_request, parsing)                    (echo / application)    (handle_write)
 *                 └─ then once per read, {@link #afterRead}: asks the parser what is under way, and settles the
 *                    budget ({@link BudgetAccount}), the clocks ({@link ConnectionTimers}) and want_read ({@link Reading})
 * </pre>
 * What must come back up (the write queue drained, an answer given, a clock ran out or the budget spoke: {@link
 * Cutoffs}) arrives as one small event here. It makes the one decision that is its own, the book's {@code want_close}:
 * why it ends (one {@link CloseReason}, the first), and when. Everything runs on the connection's event loop.
 */
public final class Connection implements ConnectionSocket.Events, FrameParser.Listener, OrderedAnswers.Listener {

  /**
   * How long a connection that owes nothing (it gave way, or shutdown found it idle) lingers at most: it is beyond the
   * limit and holds the stop; what its client sent across the FIN is read and counted, not answered by a reset.
   */
  static final long IDLE_LINGER_MS = 1000;

  final FrameEchoOptions options;
  private final FrameEchoMetrics metrics;
  final ConnectionLog log;
  final Cutoffs cutoffs;
  /** Where a request's message starts in its frame: the header's size when it is stripped, else 0. */
  private final int messageOffset;
  private final Handler<Connection> closedHandler;
  final Reading reading = new Reading();
  private final ActivityOrder order;
  final ActivityOrder.Place place = new ActivityOrder.Place(this);

  // The rooms, built at start; the cutoffs look at them too.
  ConnectionSocket socket;
  FrameParser parser;
  private BudgetAccount account;
  ResponseWriter writer;
  Responses responses;
  ConnectionTimers timers;

  /** Frames handed over since the last {@link #afterRead}, and whether a frame was under way then. */
  private int framesSinceSettled;
  private boolean frameUnderWay;
  /** The book's {@code want_close}: why (the first reason wins, an IO error with it), how far the close has gone. */
  private CloseState close = CloseState.OPEN;
  /** The client shut down its sending side (or closed): answer what it sent, then close. */
  private boolean inputEnded;
  /** A byte has arrived: the client has begun its first request. */
  private boolean receivedBytes;

  Connection(SocketAddress remote, FrameEchoOptions options, FrameEchoMetrics metrics, ConnectionLogs logs,
             ActivityOrder order, Handler<Connection> closedHandler) {
    this.order = order;
    this.options = options;
    this.metrics = metrics;
    this.messageOffset = options.getFraming().messageOffset();
    this.log = new ConnectionLog(remote, logs, messageOffset);
    this.cutoffs = new Cutoffs(this);
    this.closedHandler = closedHandler;
  }

  /** The book's {@code handle_accept}, on the caller's event loop; {@code loop} runs a task there later. */
  public static Connection accept(AcceptedSocket accepted, Executor loop, RequestHandler handler, FrameEchoOptions options,
                                  BufferBudget budget, FrameEchoMetrics metrics, ConnectionLogs logs, Ticker ticker,
                                  ActivityOrder order, Handler<Connection> closedHandler) {
    Connection connection = new Connection(accepted.remoteAddress(), options, metrics, logs, order, closedHandler);
    connection.log.newClient();
    ConnectionSocket socket = accepted.attach(connection, connection::readCap);
    connection.start(socket, handler, budget, loop, ticker);
    accepted.deliverEarlyReads(connection);
    return connection;
  }

  /** Builds the rooms; once, on the event loop. */
  void start(ConnectionSocket socket, RequestHandler handler, BufferBudget budget, Executor loop, Ticker ticker) {
    this.socket = socket;
    parser = FrameParser.controlling(socket::reading, options.getFraming(), options.getMaxFrameSize(), this);
    account = new BudgetAccount(budget, loop, cutoffs);
    parser.memoryScarce(account::memoryScarce);
    writer = new ResponseWriter(socket, account, log, options.getFraming());
    // Echo versus application, decided once: the built-in echo answers with the request's own bytes.
    responses = handler instanceof EchoHandler
      ? new EchoWriter(writer, account, metrics)
      : new OrderedAnswers(handler, options.getHandler().getMaxInFlight(), writer, account, metrics, this, loop);
    timers = new ConnectionTimers(ticker, options, socket::pendingWriteBytes, cutoffs);
    reading.wire(parser, metrics, timers, account, log);
    timers.start();
    order.join(place);
  }

  /** The most the socket's next read may take (the budget's cap), asked before each read. */
  int readCap() {
    return account.readCap(BudgetAccount.SMALL_READ);
  }

  /**
   * A read of a large frame lands in the frame's memory, not copied there after, within the budget's cap; how much it
   * takes beside the read's {@code guess} is the parser's rule ({@link FrameParser#landingFor}).
   */
  @Override
  public ByteBuf readInto(ByteBufAllocator alloc, int guess) {
    return close.decided() ? null : parser.landingFor(alloc, guess, readCap());
  }

  // ---- handle_read: the socket's events ----

  @Override
  public void bytes(ByteBuf bytes) {
    if (close.decided()) {
      // Nothing is parsed once the connection is closing: read while the close lingers, discarded, never answered.
      if (bytes.isReadable()) {
        close = close.requestReached();
      }
      bytes.release();
      return;
    }
    if (!reading.isOpen() && socket.resetByPeer()) {
      // Read past a pause: on a reset, epoll reads whether reading is on or not, and the kernel hands over what it had
      // queued before the error. Nobody is left to answer, so none of it is held.
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

  /**
   * The one step after a read (or after frames held while paused were handed over): the read's frames are written; the
   * parser says what is under way, and the budget, the frame clock and want_read settle with it.
   */
  private void afterRead() {
    if (close.decided()) {
      return;
    }
    if (responses.readDone()) {
      stopReadingIfFull();
    }
    boolean completed = framesSinceSettled != 0;
    framesSinceSettled = 0;
    long buffered = parser.bufferedBytes();
    boolean underWay = buffered != 0;
    if (underWay && (completed || !frameUnderWay)) {
      timers.frameStarted();
    }
    frameUnderWay = underWay;
    if (cutoffs.shutdownWaitOver(completed, underWay)) {
      closeAfterAnswers(CloseReason.SERVER_SHUTDOWN);
      return;
    }
    if (account.settle(buffered, underWay ? parser.announcedFrameSize() : 0, completed, parser.setAsideBytes())) {
      reading.pauseFor(Reason.OVER_BUFFER_BUDGET);
    }
  }

  @Override
  public void inputEnded() {
    inputEnded = true;
    endIfInputDone();
  }

  @Override
  public void writable() {
    if (reading.isPausedFor(Reason.WRITE_QUEUE_FULL) && !writer.writeQueueFull()) {
      if (!close.stage().closeAsked()) {
        timers.writeDrained();
      }
      resumeReading(Reason.WRITE_QUEUE_FULL);
    }
  }

  @Override
  public void shutdownRequested() {
    cutoffs.shutdownRequested();
  }

  /** Shutdown: {@code owingNothing}, at once; owing answers, after them (the drain). */
  void closeForShutdown(boolean owingNothing) {
    if (owingNothing) {
      close = close.decideIdle();
    }
    closeAfterAnswers(CloseReason.SERVER_SHUTDOWN);
  }

  // ---- try_one_request ----

  /** A whole request frame, as Netty gave it: the one place where a request is complete. */
  @Override
  public void frame(ByteBuf frame) {
    int held = frame.readableBytes();
    framesSinceSettled++;
    log.frameComplete(frame);
    timers.requestArrived();
    long receivedNanos = metrics.requestReceived(held - messageOffset);
    if (responses.request(frame, held, receivedNanos)) {
      stopReadingIfFull();
    }
  }

  /** A {@link FramingException} from the parser, or an IO error from the socket. */
  @Override
  public void failed(Throwable error) {
    if (error instanceof FramingException e) {
      metrics.protocolError();
      log.protocolError(e);
      closeAfterAnswers(CloseReason.PROTOCOL_ERROR);
    } else {
      if (!close.decided()) {
        log.wantClose(CloseReason.IO_ERROR, false);
      }
      close = close.decideIoError(error);
      forceClose();
    }
  }

  // ---- want_read ----

  /** Responses handed over may have filled the write queue, or taken every answer slot: reading stops. */
  private void stopReadingIfFull() {
    if (writer.queueFilled()) {
      reading.pauseFor(Reason.WRITE_QUEUE_FULL);
    }
    if (responses.full()) {
      reading.pauseFor(Reason.TOO_MANY_IN_FLIGHT);
    }
  }

  /** Frames received while paused are handed over when reading starts again, then the socket is read again. */
  void resumeReading(Reason reason) {
    if (reading.resumeFrom(reason)) {
      afterRead();
      endIfInputDone();
    }
  }

  // ---- answers ----

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
    closeAfterAnswers(CloseReason.HANDLER_FAILED);
  }

  // ---- for the cutoffs ----

  CloseState closeState() {
    return close;
  }

  boolean receivedBytes() {
    return receivedBytes;
  }

  /** Closes at once for {@code reason}, which overrules a shutdown's: the responses it holds cannot reach the client. */
  void cut(CloseReason reason) {
    close = close.overrulingShutdown(reason);
    log.wantClose(close.reason(), false);
    forceClose();
  }

  // ---- want_close ----

  /** After the client's input ended and all it sent was read (reading not paused), the end is decided. */
  private void endIfInputDone() {
    if (inputEnded && !close.decided() && reading.isOpen()) {
      closeAfterAnswers(parser.atFrameBoundary() ? CloseReason.CLIENT_CLOSED : CloseReason.UNEXPECTED_EOF);
    }
  }

  /** The book's {@code want_close}: stop reading now, close once the earlier requests are answered. */
  void closeAfterAnswers(CloseReason reason) {
    if (!close.decided()) {
      log.wantClose(reason, true);
    }
    // A frame half-read (or held unanswered) is discarded: lost, if the server chose to close.
    close = parser.atFrameBoundary() ? close.decide(reason) : close.decide(reason).requestReached();
    reading.stopForGood();
    order.remove(place);
    // Nothing more is parsed: what the parser holds is released now, not when a lingering close ends.
    account.closing(parser.bufferedBytes());
    parser.releaseBuffers();
    closeIfDone();
  }

  private void closeIfDone() {
    if (close.decided() && !responses.awaiting() && !close.stage().closeAsked()) {
      responses.flush();
      close = close.closeAsked();
      // A close flushes what is queued first: a peer that never reads must not hold it open for ever.
      if (socket.pendingWriteBytes() != 0) {
        timers.writeWaiting();
      }
      long lingerMs = options.getLingerTimeoutMs();
      if (close.stage().idle()) {
        socket.closeOwingNothing(Math.min(lingerMs, IDLE_LINGER_MS));
      } else {
        socket.closeLingering(close.reason() == CloseReason.IDLE_EVICTED ? Math.min(lingerMs, IDLE_LINGER_MS) : lingerMs);
      }
    }
  }

  /** Closes at once, dropping what is queued: for a peer that does not read, or a broken socket. */
  private void forceClose() {
    close = close.cut();
    socket.closeNow();
  }

  /** Cuts a connection shutdown could not drain in time: only a cut before its FIN loses what it owed. */
  public void cut() {
    if (cutoffs.shutdownDeadline()) {
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
    close = socket.handedOver() && !dropped ? close.handedOver() : close.ended(writer.lost() || dropped);
    close.losses().forEach(metrics::requestLost);
    account.close(parser.bufferedBytes());
    parser.releaseBuffers();
    order.remove(place);
    timers.cancelAll();
    reading.closed();
    metrics.connectionClosed(close.reason());
    closedHandler.handle(this);
    log.socketClosed(close.reason());
    log.closed(close.reason(), close.ioError());
  }

  /** Closing for shutdown, every answer written, nothing read and dropped: the socket may move to a successor. */
  @Override
  public boolean handOverAllowed() {
    return close.reason() == CloseReason.SERVER_SHUTDOWN && !close.requestLost() && !close.stage().cut()
      && !responses.awaiting() && !inputEnded;
  }

  // ---- what it owes, how it ended ----

  /** Not closing, no answer awaited, no frame under way, reading not paused, nothing in the write queue. */
  @Override
  public boolean owesNothing() {
    return reading.isOpen() && owesNothingWhateverTheGate();
  }

  boolean owesNothingWhateverTheGate() {
    return !close.decided() && !responses.awaiting() && parser.atFrameBoundary() && socket.pendingWriteBytes() == 0;
  }

  /** How it ended (cut, a request discarded, closed idle or drained); null while it has not. */
  public Ending ending() {
    return close.ending();
  }
}
