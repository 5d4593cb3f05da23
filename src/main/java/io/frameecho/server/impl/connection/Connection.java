package io.frameecho.server.impl.connection;

import io.frameecho.protocol.FrameParser;
import io.frameecho.protocol.FrameTooLargeException;
import io.frameecho.protocol.Frames;
import io.frameecho.server.CloseReason;
import io.frameecho.server.EchoHandler;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.RequestHandler;
import io.frameecho.server.impl.connection.ReadGate.Reason;
import io.frameecho.server.impl.shared.BudgetAccount;
import io.frameecho.server.impl.shared.BufferBudget;
import io.frameecho.server.impl.shared.ConnectionLogs;
import io.frameecho.server.impl.shared.Ticker;
import io.netty.buffer.ByteBuf;
import io.vertx.core.Context;
import io.vertx.core.Handler;
import io.vertx.core.net.SocketAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * One client connection: the book's {@code Conn}. Control runs one way through it:
 * <pre>
 *  socket ─▶ {@link #bytes} ─▶ {@link FrameParser} ─frame─▶ {@link #frame} ─▶ {@link Responses} ─▶ {@link ResponseWriter} ─▶ socket
 *            (handle_read)     (try_one_request, parsing)                    (echo / application)    (handle_write)
 *                 └─ then once per read, {@link #afterRead}: asks the parser what is under way, and settles the
 *                    budget ({@link BudgetAccount}), the clocks ({@link ConnectionTimers}) and want_read ({@link ReadGate})
 * </pre>
 * What must come back up (the write queue drained, an answer given, a clock ran out, the budget has room)
 * arrives as one small event here. It makes the one decision that is its own, the book's {@code want_close}:
 * why it ends (one {@link CloseReason}, the first), and when. Everything runs on the connection's event loop.
 */
public final class Connection implements ConnectionSocket.Events, FrameParser.Listener, OrderedAnswers.Listener,
  ConnectionTimers.Events, BudgetAccount.Owner {

  /** The logger name operators configure, kept from before the packages were split by threading rule. */
  private static final Logger log = LoggerFactory.getLogger(ConnectionLogs.LOGGER);
  private static final int LOGGED_PAYLOAD_BYTES = 100;
  /**
   * At most how long a connection that gave its slot to a newcomer reads and discards after its FIN: it owes
   * nothing, and until it closes it is a socket beyond {@code maxConnections}.
   */
  private static final long GAVE_WAY_LINGER_MS = 1000;
  /**
   * How long after its accept a connection that has sent nothing yet may still send its first request once shutdown
   * has begun: a client that connects and sends at once, accepted moments before (or while) the server stops
   * accepting, is answered rather than closed before its bytes arrive.
   */
  static final long FIRST_REQUEST_GRACE_MS = 500;

  private final SocketAddress remote;
  private final FrameEchoOptions options;
  private final FrameEchoMetrics metrics;
  /** The deployment's rate limits on close lines: a flood of one cause writes a summary, not a line each. */
  private final ConnectionLogs logs;
  private final Handler<Connection> closedHandler;
  private final ReadGate gate = new ReadGate();
  private final ActivityOrder order;
  private final ActivityOrder.Place place = new ActivityOrder.Place(this);
  private long connectedNanos;

  private ConnectionSocket socket;
  private FrameParser parser;
  private BudgetAccount account;
  private ResponseWriter writer;
  private Responses responses;
  private ConnectionTimers timers;
  private Ticker ticker;

  /** Frames handed over since the last {@link #afterRead}. */
  private int framesSinceSettled;
  /** A frame was under way at the last {@link #afterRead}. */
  private boolean frameUnderWay;
  /** The book's {@code want_close}, with its reason (the first wins), and how far the close has gone. */
  private CloseState close = CloseState.OPEN;
  private Throwable ioError;
  /** The client shut down its sending side (or closed): answer what it sent, then close. */
  private boolean inputEnded;
  /** A byte has arrived: the client has begun its first request. */
  private boolean receivedBytes;
  /** A whole request frame has arrived. */
  private boolean receivedRequest;
  /** Shutdown has begun and this connection waits, within its first-request grace, for its first request. */
  private boolean shutdownPending;
  private long firstRequestTimer = -1;

  Connection(SocketAddress remote, FrameEchoOptions options, FrameEchoMetrics metrics, ConnectionLogs logs,
             ActivityOrder order, Handler<Connection> closedHandler) {
    this.remote = remote;
    this.order = order;
    this.options = options;
    this.metrics = metrics;
    this.logs = logs;
    this.closedHandler = closedHandler;
  }

  /**
   * The book's {@code handle_accept} for one socket: a connection answering with {@code handler}, on the event
   * loop of {@code context}, which the caller is running on, its clocks on {@code ticker}; it takes its place at
   * the end of {@code order}; its close lines rate-limited by {@code logs}.
   */
  public static Connection accept(AcceptedSocket accepted, Context context, RequestHandler handler, FrameEchoOptions options,
                                  BufferBudget budget, FrameEchoMetrics metrics, ConnectionLogs logs, Ticker ticker,
                                  ActivityOrder order, Handler<Connection> closedHandler) {
    Connection connection = new Connection(accepted.remoteAddress(), options, metrics, logs, order, closedHandler);
    if (log.isDebugEnabled()) {
      log.debug("new client from {}", connection.remote);
    }
    ConnectionSocket socket = accepted.attach(connection, connection::readCap);
    connection.start(socket, handler, budget, task -> context.runOnContext(v -> task.run()), ticker);
    accepted.deliverEarlyReads(connection);
    return connection;
  }

  /** Builds the rooms; once, on the event loop. {@code loop} runs a task on this connection's event loop later. */
  void start(ConnectionSocket socket, RequestHandler handler, BufferBudget budget, Executor loop, Ticker ticker) {
    this.socket = socket;
    parser = FrameParser.controlling(socket::reading, options.getMaxFrameSize(), this);
    account = new BudgetAccount(budget, loop, this);
    parser.memoryScarce(account::memoryScarce);
    writer = new ResponseWriter(socket, account);
    // Echo versus application, decided once: the built-in echo answers with the request's own bytes.
    responses = handler instanceof EchoHandler
      ? new EchoWriter(writer, account, metrics)
      : new OrderedAnswers(handler, options.getHandler().getMaxInFlight(), writer, account, metrics, this);
    timers = new ConnectionTimers(ticker, options.getIdleTimeoutMs(), options.getFrameTimeoutMs(),
      options.getWriteStallTimeoutMs(), socket::pendingWriteBytes, this);
    timers.start();
    this.ticker = ticker;
    connectedNanos = ticker.nanoTime();
    order.touch(place);
  }

  /** The most the socket's next read may take (the budget's cap); asked only for reads larger than a small one. */
  int readCap() {
    return account.readCap(CappedReads.SMALL_READ);
  }

  // ---- handle_read: the socket's events ----

  @Override
  public void bytes(ByteBuf bytes) {
    if (close.decided()) {
      // Nothing is parsed once the connection is closing: read while the close lingers, discarded, never answered.
      bytes.release();
      return;
    }
    if (!gate.isOpen() && socket.resetByPeer()) {
      // Read past a pause: on a reset, epoll reads whether reading is on or not, and the kernel hands over what it had
      // queued before the error. Nobody is left to answer, so none of it is held.
      bytes.release();
      failed(new IOException("connection reset by peer (" + remote + ") while the server had paused reading it"));
      return;
    }
    receivedBytes = true;
    account.received(bytes.readableBytes());
    order.touch(place);
    parser.handle(bytes);
    afterRead();
  }

  /**
   * The one step after a read (or after frames held while paused were handed over): the frames of the read are
   * written, and the connection asks the parser what is under way and settles the budget, the frame clock and
   * the read gate with it.
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
    if (shutdownPending && receivedRequest && !underWay) {
      // The first request(s) after shutdown began have arrived whole: answer them, then close.
      closeAfterAnswers(CloseReason.SERVER_SHUTDOWN);
      return;
    }
    if (account.settle(buffered, underWay ? parser.announcedFrameSize() : 0, completed, parser.setAsideBytes())) {
      pauseReading(Reason.OVER_BUFFER_BUDGET);
    }
  }

  @Override
  public void inputEnded() {
    inputEnded = true;
    endIfInputDone();
  }

  @Override
  public void writable() {
    if (gate.isPausedFor(Reason.WRITE_QUEUE_FULL) && !writer.writeQueueFull()) {
      if (!close.stage().closeAsked()) {
        timers.writeDrained();
      }
      resumeReading(Reason.WRITE_QUEUE_FULL);
    }
  }

  /**
   * Shutdown: a connection that owes nothing closes at once; one that owes answers closes after them (the drain);
   * one accepted less than {@link #FIRST_REQUEST_GRACE_MS} ago that has sent nothing yet first waits that long for
   * its first request, and is answered.
   */
  @Override
  public void shutdownRequested() {
    if (close.decided() || shutdownPending) {
      return;
    }
    if (!receivedBytes) {
      long leftMs = FIRST_REQUEST_GRACE_MS - TimeUnit.NANOSECONDS.toMillis(ticker.nanoTime() - connectedNanos);
      if (leftMs > 0) {
        shutdownPending = true;
        firstRequestTimer = ticker.schedule(leftMs, this::firstRequestGraceOver);
        return;
      }
    }
    closeForShutdown();
  }

  private void firstRequestGraceOver() {
    firstRequestTimer = -1;
    if (!close.decided() && !receivedBytes) {
      closeForShutdown();
    }
    // A request under way finishes first: afterRead closes once it is whole (frameTimeoutMs and the shutdown
    // deadline bound the wait).
  }

  private void closeForShutdown() {
    if (owesNothing()) {
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
    if (log.isTraceEnabled()) {
      int length = held - Frames.HEADER_SIZE;
      byte[] start = new byte[Math.min(length, LOGGED_PAYLOAD_BYTES)];
      frame.getBytes(frame.readerIndex() + Frames.HEADER_SIZE, start);
      log.trace("{} client says: len:{} data:{}", remote, length, new String(start, StandardCharsets.ISO_8859_1));
    }
    receivedRequest = true;
    timers.requestArrived();
    long receivedNanos = metrics.requestReceived(held - Frames.HEADER_SIZE);
    if (responses.request(frame, held, receivedNanos)) {
      stopReadingIfFull();
    }
  }

  /** A {@link FrameTooLargeException} from the parser, or an IO error from the socket. */
  @Override
  public void failed(Throwable error) {
    if (error instanceof FrameTooLargeException e) {
      metrics.protocolError();
      if (logs.protocolError.logNow(remote)) {
        log.warn("{} protocol error: frame length {} exceeds maxFrameSize {}; closing after the earlier responses",
          remote, e.length(), e.maxFrameSize());
      }
      closeAfterAnswers(CloseReason.PROTOCOL_ERROR);
    } else {
      if (!close.decided()) {
        ioError = error;
      }
      close = close.decide(CloseReason.IO_ERROR);
      forceClose();
    }
  }

  // ---- want_read ----

  /** Responses handed over may have filled the write queue, or taken every answer slot: reading stops. */
  private void stopReadingIfFull() {
    if (writer.queueFilled()) {
      pauseReading(Reason.WRITE_QUEUE_FULL);
    }
    if (responses.full()) {
      pauseReading(Reason.TOO_MANY_IN_FLIGHT);
    }
  }

  private void pauseReading(Reason reason) {
    boolean wasOpen = gate.isOpen();
    boolean serverPaused = gate.isPausedForOtherThan(Reason.OVER_BUFFER_BUDGET);
    if (!gate.pause(reason)) {
      return;
    }
    if (wasOpen) {
      parser.pause();
      metrics.readingPaused();
      // Time the server keeps a frame from being read is not the client's: the budget bounds its own waits (its turns).
      timers.readingPaused();
    }
    if (!serverPaused && reason != Reason.OVER_BUFFER_BUDGET) {
      account.serverPaused(true);
    }
    if (reason == Reason.WRITE_QUEUE_FULL) {
      timers.writeWaiting();
    }
  }

  private void resumeReading(Reason reason) {
    boolean serverPaused = gate.isPausedForOtherThan(Reason.OVER_BUFFER_BUDGET);
    boolean opened = gate.resume(reason);
    if (serverPaused && !gate.isPausedForOtherThan(Reason.OVER_BUFFER_BUDGET)) {
      account.serverPaused(false);
    }
    if (!opened) {
      return;
    }
    timers.readingResumed();
    metrics.readingResumed();
    if (gate.isShut()) {
      return;
    }
    // Frames received while paused are handed over now, then the socket is read again.
    parser.resume();
    afterRead();
    endIfInputDone();
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
    if (logs.handlerFailed.logNow(new FailedFrom(remote, cause))) {
      log.warn("{} closing: request handler failed: {}", remote, cause.toString());
    }
    closeAfterAnswers(CloseReason.HANDLER_FAILED);
  }

  // ---- the budget ----

  @Override
  public void budgetHasRoom() {
    resumeReading(Reason.OVER_BUFFER_BUDGET);
  }

  @Override
  public void budgetEvicted(long heldBytes, long stalledMs, int waiting, long used, long limit) {
    if (logs.budgetEvicted.logNow(remote)) {
      log.info("{} closing: evicted for the buffer budget: its admitted frame holds {} bytes and read less than {} bytes in {} ms "
          + "while {} connection(s) waited (budgetGraceMs); {} of {} bytes held (maxBufferedBytes)",
        remote, heldBytes, BudgetAccount.MIN_PROGRESS, stalledMs, waiting, used, limit);
    }
    closeAfterAnswers(CloseReason.BUDGET_EVICTED);
  }

  /**
   * The budget is spent, others wait, and this connection's held bytes have not moved for {@code graceMs}: if the kernel
   * has sent its client no byte for a quarter of {@code writeStallTimeoutMs} (the write-stall clock's own look; at least
   * {@code graceMs}) while its responses wait, they would stay held until that clock ends it, and every waiting frame
   * with them; so it is cut now, as a write stall is. Only where the kernel can tell (epoll's TCP_INFO): Netty's own
   * count moves only once the kernel's buffer has drained a good part, so on it a slow reader looks like one that reads
   * nothing. A slow reader is sent data each time it frees a segment's worth of its window: over loopback (64 KiB
   * segments) every 2.6 s at 50 KB/s (measured), so it is kept; one at 10 KB/s may be cut.
   */
  @Override
  public void evictIfNotReading(long graceMs, int waiting, long used, long limit) {
    long writeStallMs = options.getWriteStallTimeoutMs();
    if (close.stage().cut() || writeStallMs == 0 || !writeStalledNow()) {
      return;
    }
    long sinceDataSent = socket.msSinceDataSent();
    long stalledMs = Math.min(sinceDataSent, timers.msWithoutWriteProgress());
    if (sinceDataSent < 0 || stalledMs < Math.max(graceMs, writeStallMs / 4)) {
      return;
    }
    if (logs.budgetEvicted.logNow(remote)) {
      log.info("{} closing: evicted for the buffer budget: its client was sent no byte for {} ms while its responses were "
          + "held and {} connection(s) waited (a quarter of writeStallTimeoutMs); {} of {} bytes held (maxBufferedBytes)",
        remote, stalledMs, waiting, used, limit);
    }
    close = close.overrulingShutdown(CloseReason.BUDGET_EVICTED);
    forceClose();
  }

  /** Its client takes no response byte: its write queue is full and reading paused for it, or a close waits to flush. */
  private boolean writeStalledNow() {
    return close.stage().closeAsked() ? !socket.lingering() : gate.isPausedFor(Reason.WRITE_QUEUE_FULL) && writer.writeQueueFull();
  }

  // ---- the clocks ----

  @Override
  public boolean idle(long idleMs) {
    if (close.decided()) {
      return true;
    }
    if (responses.awaiting() || !gate.isOpen() || !parser.atFrameBoundary()) {
      return false;
    }
    if (log.isDebugEnabled()) {
      log.debug("{} closing: no request for {} ms (idleTimeoutMs)", remote, idleMs);
    }
    closeAfterAnswers(CloseReason.IDLE_TIMEOUT);
    return true;
  }

  @Override
  public void frameTimedOut(long elapsedMs) {
    if (close.decided() || parser.atFrameBoundary()) {
      return;
    }
    if (logs.frameTimeout.logNow(remote)) {
      log.info("{} closing: a frame started {} ms ago (not counting time the server paused reading) is still incomplete "
          + "after {} bytes (frameTimeoutMs)",
        remote, elapsedMs, parser.bufferedBytes());
    }
    closeAfterAnswers(CloseReason.FRAME_TIMEOUT);
  }

  @Override
  public void writeStalled() {
    if (close.stage().cut() || !writeStalledNow()) {
      return;
    }
    if (logs.writeStall.logNow(remote)) {
      log.info("{} closing: no response byte read for {} ms (writeStallTimeoutMs)", remote, timers.writeStallTimeoutMs());
    }
    close = close.overrulingShutdown(CloseReason.WRITE_STALL);
    forceClose();
  }

  // ---- want_close ----

  /**
   * After the client's input ended: once everything it sent has been read (reading is not paused, so
   * nothing waits in the socket), the end is decided and the connection closes after its answers.
   */
  private void endIfInputDone() {
    if (inputEnded && !close.decided() && gate.isOpen()) {
      closeAfterAnswers(parser.atFrameBoundary() ? CloseReason.CLIENT_CLOSED : CloseReason.UNEXPECTED_EOF);
    }
  }

  /** The book's {@code want_close}: stop reading now, close once the earlier requests are answered. */
  private void closeAfterAnswers(CloseReason reason) {
    close = close.decide(reason);
    gate.shut();
    order.remove(place);
    parser.pause();
    // Nothing more is parsed: what the parser holds is released now, not when a lingering close ends.
    account.closing(parser.bufferedBytes());
    parser.releaseBuffers();
    closeIfDone();
  }

  private void closeIfDone() {
    if (close.decided() && !responses.awaiting() && !close.stage().closeAsked()) {
      responses.flush();
      close = close.closeAsked();
      // The close flushes what is queued first; a peer that never reads must not hold it open for ever. With nothing
      // queued the FIN goes out at once: no clock is needed.
      if (socket.pendingWriteBytes() != 0) {
        timers.writeWaiting();
      }
      if (close.stage().idle()) {
        socket.closeOwingNothing();
      } else {
        socket.closeLingering(close.reason() == CloseReason.IDLE_EVICTED
          ? Math.min(options.getLingerTimeoutMs(), GAVE_WAY_LINGER_MS) : options.getLingerTimeoutMs());
      }
    }
  }

  /** Closes at once, dropping whatever is still queued: for a peer that does not read, or a broken socket. */
  private void forceClose() {
    close = close.cut();
    socket.closeNow();
  }

  /** Cuts a connection that shutdown could not drain in time (one lingering has delivered everything). */
  public void cut() {
    // One lingering has delivered everything: only a cut before its FIN loses what it owed.
    boolean undelivered = !socket.lingering();
    close = close.decide(CloseReason.SERVER_SHUTDOWN);
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
    close = close.ended(writer.lost() || dropped);
    account.close(parser.bufferedBytes());
    parser.releaseBuffers();
    order.remove(place);
    timers.cancelAll();
    if (firstRequestTimer >= 0) {
      ticker.cancel(firstRequestTimer);
      firstRequestTimer = -1;
    }
    if (gate.clear()) {
      metrics.readingResumed();
    }
    metrics.connectionClosed(close.reason());
    closedHandler.handle(this);
    // Last, so that the line means every count has been settled.
    if (log.isDebugEnabled()) {
      if (ioError == null) {
        log.debug("{} {}", remote, close.reason());
      } else {
        log.debug("{} {}: {}", remote, close.reason(), ioError.getMessage());
      }
    }
  }

  /**
   * Whether this connection may close to make room for a newcomer at {@code nowNanos}: connected and quiet for
   * {@code idleGiveWayMs} at least, and owing nothing ({@link #owesNothing}).
   */
  boolean canGiveWay(long nowNanos) {
    return nowNanos - connectedNanos >= order.giveWayAfterNanos && nowNanos - place.activeNanos >= order.giveWayAfterNanos
      && (owesNothing() || leftWhileWaitingForBudget());
  }

  /**
   * Paused for the budget alone, at a frame boundary, owing nothing, and its client has closed its side: a paused
   * socket is not read, so the server would see that end only once the budget has room again, and until then the
   * connection would keep its slot. Asks the kernel, so only when a newcomer needs the slot.
   */
  private boolean leftWhileWaitingForBudget() {
    return gate.isPausedFor(Reason.OVER_BUFFER_BUDGET) && !gate.isPausedForOtherThan(Reason.OVER_BUFFER_BUDGET)
      && owesNothingWhateverTheGate() && socket.clientClosed();
  }

  /**
   * Not closing, no answer awaited, no frame under way, reading not paused, nothing left in the write queue.
   * (Responses the kernel has taken and the client has not read yet are beyond what the server can see.)
   */
  @Override
  public boolean owesNothing() {
    return gate.isOpen() && owesNothingWhateverTheGate();
  }

  private boolean owesNothingWhateverTheGate() {
    return !close.decided() && !responses.awaiting() && parser.atFrameBoundary() && socket.pendingWriteBytes() == 0;
  }

  /** Closes to make room for a newcomer, which takes this connection's slot: a FIN, as nothing is owed. */
  public void giveWay() {
    closeAfterAnswers(CloseReason.IDLE_EVICTED);
  }

  /** True when the connection closed to make room for a newcomer: its slot went to the newcomer. */
  public boolean gaveWay() {
    return close.reason() == CloseReason.IDLE_EVICTED;
  }

  /** True when the connection ended with answers or responses it could not deliver. */
  public boolean wasCut() {
    return close.ending() == CloseState.Ending.CUT;
  }

  /** True when shutdown closed it at once because it owed nothing (and nothing was cut). */
  public boolean closedIdle() {
    return close.ending() == null ? close.stage().idle() : close.ending() == CloseState.Ending.CLOSED_IDLE;
  }

  /** A failed handler's sample in its summary line; formatted only if that line is written. */
  private record FailedFrom(SocketAddress remote, Throwable cause) {
    @Override
    public String toString() {
      return "from " + remote + ": " + cause;
    }
  }
}
