package io.frameecho.server.impl.connection;

import io.frameecho.server.CloseReason;
import io.frameecho.server.impl.connection.CloseState.Ending;
import io.frameecho.server.impl.connection.EchoHandler;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.RequestHandler;
import io.frameecho.server.impl.shared.BufferBudget;
import io.frameecho.server.impl.shared.LogSummary;
import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.RecordingMetrics;
import io.frameecho.testkit.VirtualTicker;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.SocketAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Executor;

import static io.frameecho.server.CloseReason.BUDGET_EVICTED;
import static io.frameecho.server.CloseReason.CLIENT_CLOSED;
import static io.frameecho.server.CloseReason.FRAME_TIMEOUT;
import static io.frameecho.server.CloseReason.HANDLER_FAILED;
import static io.frameecho.server.CloseReason.IDLE_EVICTED;
import static io.frameecho.server.CloseReason.IDLE_TIMEOUT;
import static io.frameecho.server.CloseReason.IO_ERROR;
import static io.frameecho.server.CloseReason.PROTOCOL_ERROR;
import static io.frameecho.server.CloseReason.SERVER_SHUTDOWN;
import static io.frameecho.server.CloseReason.UNEXPECTED_EOF;
import static io.frameecho.server.CloseReason.WRITE_STALL;
import static io.frameecho.server.impl.connection.Wire.concat;
import static io.frameecho.server.impl.connection.Wire.frame;
import static io.frameecho.server.impl.connection.Wire.header;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;

class ConnectionTest {

  /** The failing handlers and protocol errors these tests cause on purpose log WARN lines; captured. */
  @RegisterExtension
  final LogCapture connectionLog = LogCapture.named("io.frameecho.server.impl.Connection");

  private static final long LINGER = 250;
  private static final byte[] A = frame("alpha");
  private static final byte[] B = frame("");
  private static final byte[] C = frame("charlie, a little longer");

  private static final long GIVE_WAY_MS = 1000;
  private final VirtualTicker ticker = new VirtualTicker();
  private final ActivityOrder order = new ActivityOrder(ticker, GIVE_WAY_MS);
  private final RecordingMetrics metrics = new RecordingMetrics();
  private final LogSummary logs = new LogSummary(ticker);
  private final FakeSocket socket = new FakeSocket();
  private final Wire.Reads reads = new Wire.Reads();
  private final FrameEchoOptions options = new FrameEchoOptions().setMaxFrameSize(64).setWriteQueueMaxSize(1024)
    .setMaxBufferedBytes(1 << 20).setIdleTimeoutMs(0).setFrameTimeoutMs(0).setWriteStallTimeoutMs(0)
    .setLingerTimeoutMs(LINGER);
  private Executor loop = Runnable::run;
  private BufferBudget budget;
  private Connection connection;
  private int closedHandled;
  /** What a {@link #pending} handler was given, and the answer it owes for each. */
  private final List<String> requests = new ArrayList<>();
  private final List<Promise<Buffer>> answers = new ArrayList<>();

  private void start(RequestHandler handler) {
    budget = new BufferBudget(options.getMaxBufferedBytes(), 1000, ticker);
    connection = new Connection(SocketAddress.inetSocketAddress(1234, "127.0.0.1"), options, metrics, logs,
      order, c -> closedHandled++);
    connection.start(socket, handler, budget, loop, ticker);
  }

  private void echo() {
    start(new EchoHandler());
  }

  /** An echo whose write queue is full: what it answers waits there, and reading stops. */
  private void echoBehindAFullQueue() {
    echo();
    socket.full = true;
  }

  /** The write-stall clock at 300 ms; the echo of A waits in a full queue, behind 100 bytes the client leaves. */
  private void anEchoTheClientDoesNotTake() {
    options.setWriteStallTimeoutMs(300);
    echoBehindAFullQueue();
    socket.pending = 100;
    read(A);
  }

  /** A handler whose answers the test gives. */
  private void pending() {
    start(request -> {
      requests.add(request.toString());
      Promise<Buffer> answer = Promise.promise();
      answers.add(answer);
      return answer.future();
    });
  }

  /** Shutdown is asked while the answer to A is awaited. */
  private void shutdownWithAnAnswerAwaited() {
    pending();
    read(A);
    connection.shutdownRequested();
  }

  /** One read from the socket. */
  private ByteBuf read(byte[]... parts) {
    ByteBuf read = reads.read(parts);
    connection.bytes(read);
    return read;
  }

  private boolean closing() {
    return socket.lingerMs >= 0 || socket.closedNow || socket.closedOwingNothing;
  }

  /**
   * The socket closes: why the connection ended, once every byte it held is released (a request whose answer is still
   * awaited stays counted until the handler lets go of it: its answer completes, here failed at once).
   */
  private CloseReason closed() {
    connection.closed();
    assertEquals(1, closedHandled);
    answers.forEach(answer -> answer.tryFail("the handler lets go"));
    assertEquals(0, budget.used(), "the budget is back to zero");
    reads.assertReleased();
    assertEquals(1, metrics.closeReasons().size());
    return metrics.closeReasons().get(0);
  }

  /** A lingering close, a FIN after what was written: the connection ended for {@code reason}. */
  private void assertLingeringClose(CloseReason reason) {
    assertEquals(LINGER, socket.lingerMs);
    assertEquals(reason, closed());
  }

  /** Not closing until {@code ms} from now: moves the clock to that moment. */
  private void assertOpenUntil(long ms) {
    assertOpenUntil(ms, null);
  }

  private void assertOpenUntil(long ms, String message) {
    ticker.advance(ms - 1);
    assertFalse(closing(), message);
    ticker.advance(1);
  }

  /** The socket is not closed at once until {@code ms} from now, and is at {@code ms}. */
  private void assertCutAfter(long ms) {
    ticker.advance(ms - 1);
    assertFalse(socket.closedNow);
    ticker.advance(1);
    assertTrue(socket.closedNow);
  }

  // ---- echo ----

  @Test
  void pipelinedFramesInOneReadGoBackInOneWrite() {
    echo();
    read(A, B, C);
    assertEquals(1, socket.writes.size());
    assertArrayEquals(concat(A, B, C), socket.writes.get(0));
    assertTrue(socket.readingOn());
    assertEquals(CLIENT_CLOSED, closed());
    assertNotEquals(Ending.CUT, connection.ending());
  }

  @Test
  void aFrameSplitAcrossReadsIsEchoedOnceWhole() {
    echo();
    read(Arrays.copyOfRange(C, 0, 2));
    read(Arrays.copyOfRange(C, 2, 9));
    assertEquals(0, socket.writes.size());
    read(Arrays.copyOfRange(C, 9, C.length), A);
    assertArrayEquals(C, socket.writes.get(0));
    assertArrayEquals(concat(C, A), socket.written().getBytes());
    assertEquals(CLIENT_CLOSED, closed());
  }

  @Test
  void aFrameOfMaxFrameSizeIsEchoed() {
    echo();
    byte[] largest = frame("x".repeat(options.getMaxFrameSize()));
    read(largest);
    assertArrayEquals(largest, socket.written().getBytes());
    assertFalse(closing());
    assertEquals(CLIENT_CLOSED, closed());
  }

  @Test
  void anOversizedHeaderClosesAfterTheEarlierResponses() {
    echo();
    read(A, header(options.getMaxFrameSize() + 1), "never parsed".getBytes());
    assertArrayEquals(A, socket.written().getBytes());
    assertEquals(LINGER, socket.lingerMs);
    assertFalse(socket.closedNow);
    assertEquals(1, metrics.protocolErrors());
    // The cause exists once the connection logged it; asked by its key, the same one every connection counts on.
    assertEquals(1, logs.cause(PROTOCOL_ERROR, null, null, null).occurrences(), "the close line goes through the rate limit");

    read(B);
    assertArrayEquals(A, socket.written().getBytes(), "what is read while the close lingers is discarded");
    assertEquals(PROTOCOL_ERROR, closed());
  }

  // ---- back-pressure ----

  @Test
  void aFullWriteQueueStopsReadingUntilItDrains() {
    echoBehindAFullQueue();
    read(A);
    assertArrayEquals(A, socket.written().getBytes());
    assertFalse(socket.readingOn());

    read(B, Arrays.copyOfRange(C, 0, 5));
    read(Arrays.copyOfRange(C, 5, C.length));
    connection.writable();
    assertEquals(1, socket.writes.size(), "not answered while the queue is still full");
    assertFalse(socket.readingOn());

    socket.full = false;
    connection.writable();
    assertArrayEquals(concat(A, B, C), socket.written().getBytes());
    assertTrue(socket.readingOn());
    assertEquals(CLIENT_CLOSED, closed());
  }

  /**
   * The loop's decisions, as the logger {@code io.frameecho.loop} tells a learner (src/docs/DESIGN.md, "Watching the
   * loop decide"): one line per decision the connection made, each with its reason, and one input ended as want_close.
   */
  @Test
  void theLoopLoggerTellsEachDecisionOnce() {
    try (io.frameecho.testkit.LogCapture loop = io.frameecho.testkit.LogCapture.named(ConnectionLog.LOOP_LOGGER)) {
      ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(ConnectionLog.LOOP_LOGGER))
        .setLevel(ch.qos.logback.classic.Level.TRACE);
      echoBehindAFullQueue();
      read(A, B);
      socket.full = false;
      connection.writable();
      connection.inputEnded();
      assertEquals(CLIENT_CLOSED, closed());
      assertEquals(2, loop.count(ch.qos.logback.classic.Level.TRACE, "frame complete"));
      assertEquals(1, loop.count(ch.qos.logback.classic.Level.TRACE, "want_write: " + (A.length + B.length) + " bytes of answers queued, "
        + "the queue is over writeQueueMaxSize"), "one write for the read's two frames");
      assertEquals(1, loop.count(ch.qos.logback.classic.Level.DEBUG, "want_read=false: the write queue is over writeQueueMaxSize"));
      assertEquals(1, loop.count(ch.qos.logback.classic.Level.DEBUG, "want_read=true: the write queue drained"));
      assertEquals(1, loop.count(ch.qos.logback.classic.Level.DEBUG, "want_close: client closed, after the answers owed"));
      assertEquals(1, loop.count(ch.qos.logback.classic.Level.DEBUG, "closed: client closed"));
    }
  }

  @Test
  void atMaxInFlightReadingStopsUntilAnAnswerComes() {
    options.getHandler().setMaxInFlight(1);
    pending();
    read(A, C);
    assertEquals(List.of("alpha"), requests);
    assertFalse(socket.readingOn());

    answers.get(0).complete(Buffer.buffer("1"));
    assertEquals(List.of("alpha", "charlie, a little longer"), requests, "the held frame is handed over");
    assertFalse(socket.readingOn(), "and takes the one slot again");

    answers.get(1).complete(Buffer.buffer("2"));
    assertTrue(socket.readingOn());
    assertArrayEquals(concat(frame("1"), frame("2")), socket.written().getBytes());
    assertEquals(CLIENT_CLOSED, closed());
  }

  /** Over the budget with nothing held but its own frame, a connection is let read on: nothing else could free room. */
  @Test
  void aFrameOverTheBudgetWithNothingElseHeldReadsOn() {
    ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    loop = tasks::add;
    options.setMaxBufferedBytes(32);
    echo();
    byte[] big = frame("y".repeat(60));
    read(Arrays.copyOfRange(big, 0, 34));
    assertTrue(socket.readingOn(), "34 bytes held, over a budget of 32, and nothing else");
    assertEquals(0, budget.waiting());
    read(Arrays.copyOfRange(big, 34, big.length));
    assertArrayEquals(big, socket.written().getBytes());
    assertTrue(tasks.isEmpty());
    assertEquals(CLIENT_CLOSED, closed());
  }

  /** Over the budget behind bytes others hold, the connection waits for its turn, and reads again once admitted. */
  @Test
  void aFrameOverTheBudgetWaitsUntilAdmitted() {
    ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    loop = tasks::add;
    options.setMaxBufferedBytes(32);
    echo();
    budget.reserve(100);
    byte[] big = frame("y".repeat(60));
    read(Arrays.copyOfRange(big, 0, 34));
    assertFalse(socket.readingOn(), "100 bytes others hold, and 34 of its own, over a budget of 32");
    assertEquals(1, budget.waiting());
    budget.release(100);
    while (!tasks.isEmpty()) {
      tasks.poll().run();
    }
    assertTrue(socket.readingOn(), "admitted for one small read");
    read(Arrays.copyOfRange(big, 34, big.length));
    assertArrayEquals(big, socket.written().getBytes());
    assertEquals(0, budget.waiting());
    assertEquals(CLIENT_CLOSED, closed());
  }

  /**
   * A large frame's reads land in its memory, set aside ahead of the bytes, only once the budget has admitted the frame
   * whole, so the memory is counted before it is set aside.
   */
  @Test
  void aLargeFramesReadsLandInItsMemoryOnlyOnceAdmitted() {
    options.setMaxFrameSize(1 << 20);
    echo();
    byte[] big = frame("z".repeat(100_000));
    read(Arrays.copyOfRange(big, 0, 1_000));
    assertNull(connection.readInto(ByteBufAllocator.DEFAULT, 65_536), "1,000 bytes in: the frame is not admitted");
    read(Arrays.copyOfRange(big, 1_000, 10_000));
    assertEquals(big.length, budget.used(), "10,000 bytes in: the frame is admitted whole");
    ByteBuf into = connection.readInto(ByteBufAllocator.DEFAULT, 65_536);
    assertNotNull(into, "admitted: the next read lands in the frame");
    int landed = Math.min(into.writableBytes(), big.length - 10_000);
    connection.bytes(into.writeBytes(big, 10_000, landed));
    read(Arrays.copyOfRange(big, 10_000 + landed, big.length));
    assertArrayEquals(big, socket.written().getBytes());
    assertEquals(CLIENT_CLOSED, closed());
  }

  // ---- the end ----

  @Test
  void inputEndedAtAFrameBoundaryIsClientClosed() {
    echo();
    read(A);
    connection.inputEnded();
    assertLingeringClose(CLIENT_CLOSED);
  }

  @Test
  void inputEndedInsideAFrameIsUnexpectedEof() {
    echo();
    read(A, Arrays.copyOfRange(C, 0, 7));
    connection.inputEnded();
    assertEquals(LINGER, socket.lingerMs);
    assertArrayEquals(A, socket.written().getBytes());
    assertEquals(UNEXPECTED_EOF, closed());
  }

  @Test
  void inputEndedWhileReadingIsPausedAnswersTheHeldFramesFirst() {
    echoBehindAFullQueue();
    read(A);
    read(C);
    connection.inputEnded();
    assertFalse(closing());

    socket.full = false;
    connection.writable();
    assertArrayEquals(concat(A, C), socket.written().getBytes());
    assertLingeringClose(CLIENT_CLOSED);
  }

  @Test
  void aSocketClosedInsideAFrameIsUnexpectedEof() {
    echo();
    read(Arrays.copyOfRange(C, 0, 3));
    assertEquals(UNEXPECTED_EOF, closed());
  }

  @Test
  void anIoErrorClosesAtOnce() {
    echo();
    read(A);
    connection.failed(new IOException("connection reset"));
    assertTrue(socket.closedNow);
    assertEquals(-1, socket.lingerMs);
    assertEquals(IO_ERROR, closed());
  }

  @Test
  void aFailedAnswerClosesAfterTheEarlierAnswers() {
    pending();
    read(A, B, C);
    answers.get(0).complete(Buffer.buffer("first"));
    answers.get(2).complete(Buffer.buffer("third"));
    assertFalse(closing());
    answers.get(1).fail("boom");
    assertArrayEquals(frame("first"), socket.written().getBytes());
    assertLingeringClose(HANDLER_FAILED);
  }

  @Test
  void aSocketClosedWithAnswersAwaitedDropsThemAndIsCut() {
    pending();
    read(A, C);
    assertEquals(CLIENT_CLOSED, closed());
    assertEquals(Ending.CUT, connection.ending());

    assertEquals(0, socket.writes.size(), "the failure of an answer after the close is nobody's");
  }

  @Test
  void aResponseThatCouldNotBeWrittenIsCut() {
    echo();
    socket.completeAtOnce = false;
    read(A);
    socket.completeWrites(false);
    assertEquals(CLIENT_CLOSED, closed());
    assertEquals(Ending.CUT, connection.ending());
  }

  /** Connection.wantClose: "what the parser holds is released now, not when a lingering close ends". */
  @Test
  void aHandlerFailingAtOnceReleasesTheRestOfTheReadBeforeTheLingeringClose() {
    start(request -> {
      throw new IllegalStateException("thrown");
    });
    ByteBuf read = read(A, C);
    assertEquals(LINGER, socket.lingerMs);
    assertEquals(1, read.refCnt(), "only the test's own reference is left");
    assertEquals(HANDLER_FAILED, closed());
  }

  @Test
  void shutdownClosesAfterTheAwaitedAnswers() {
    shutdownWithAnAnswerAwaited();
    assertFalse(closing());
    read(C);
    assertEquals(1, requests.size(), "nothing more is read once shutdown is asked");

    answers.get(0).complete(Buffer.buffer("last"));
    assertArrayEquals(frame("last"), socket.written().getBytes());
    assertLingeringClose(SERVER_SHUTDOWN);
  }

  /** A request read and held while the write queue was full when shutdown began is answered once it drains, then the close. */
  @Test
  void aRequestHeldAtShutdownIsAnsweredWhenTheQueueDrains() {
    echoBehindAFullQueue();
    read(A);
    read(C);
    connection.shutdownRequested();
    assertFalse(closing(), "C waits for the queue, not discarded");

    socket.full = false;
    connection.writable();
    assertArrayEquals(concat(A, C), socket.written().getBytes());
    assertLingeringClose(SERVER_SHUTDOWN);
    assertFalse(socket.readingOn());
    assertEquals(List.of(), metrics.requestsLost());
  }

  @Test
  void aCutAtShutdownsDeadlineClosesAtOnce() {
    shutdownWithAnAnswerAwaited();
    connection.cut();
    assertTrue(socket.closedNow);
    assertEquals(-1, socket.lingerMs);
    assertEquals(SERVER_SHUTDOWN, closed());
    assertEquals(Ending.CUT, connection.ending());
  }

  // ---- giving way to a newcomer ----

  @Test
  void aConnectionQuietForASecondGivesWayWithAFin() {
    echo();
    read(A);
    ticker.advance(GIVE_WAY_MS - 1);
    assertNull(order.idlest(), "quiet for less than a second");
    ticker.advance(1);
    assertSame(connection, order.idlest());
    order.giveWay(connection);
    assertEquals(LINGER, socket.lingerMs, "a lingering close: a FIN, not a reset");
    assertNull(order.idlest(), "a closing connection leaves the order");
    assertTrue(order.gaveWay(connection));
    assertEquals(IDLE_EVICTED, closed());
  }

  @Test
  void aConnectionOwingSomethingNeverGivesWay() {
    pending();
    read(A);
    ticker.advance(10_000);
    assertNull(order.idlest(), "an answer awaited");
    answers.get(0).complete(Buffer.buffer("a"));
    socket.pending = 10;
    ticker.advance(10_000);
    assertNull(order.idlest(), "a response not taken by the client");
    socket.pending = 0;
    read(Arrays.copyOf(C, 6));
    ticker.advance(10_000);
    assertNull(order.idlest(), "a frame under way");
    read(Arrays.copyOfRange(C, 6, C.length));
    ticker.advance(GIVE_WAY_MS);
    assertNull(order.idlest(), "the answer to the last frame is awaited");
    answers.get(1).complete(Buffer.buffer("c"));
    ticker.advance(GIVE_WAY_MS);
    assertSame(connection, order.idlest(), "owing nothing, quiet for a second");
    assertEquals(CLIENT_CLOSED, closed());
  }

  // ---- the clocks ----

  @Test
  void noRequestForIdleTimeoutClosesTheConnection() {
    options.setIdleTimeoutMs(1000);
    echo();
    ticker.advance(999);
    read(A);
    assertOpenUntil(1000, "the request pushed the idle clock back");
    assertLingeringClose(IDLE_TIMEOUT);
  }

  @Test
  void anAwaitedAnswerIsNotIdle() {
    options.setIdleTimeoutMs(1000);
    pending();
    read(A);
    ticker.advance(5000);
    read(B);
    assertEquals(2, requests.size(), "still reading");

    answers.get(0).complete(Buffer.buffer("late"));
    answers.get(1).complete(Buffer.buffer(""));
    ticker.advance(1000);
    assertEquals(LINGER, socket.lingerMs);
    assertArrayEquals(concat(frame("late"), frame("")), socket.written().getBytes());
    assertEquals(IDLE_TIMEOUT, closed());
  }

  @Test
  void aFrameTrickledInTooSlowlyTimesOut() {
    options.setFrameTimeoutMs(500);
    echo();
    read(header(10), "abc".getBytes());
    ticker.advance(300);
    read("d".getBytes());
    assertOpenUntil(200, "a byte more does not restart the frame's clock");
    assertEquals(LINGER, socket.lingerMs);
    assertEquals(0, socket.writes.size());
    assertEquals(FRAME_TIMEOUT, closed());
  }

  @Test
  void aFrameStartedInTheReadThatEndsAnotherGetsItsOwnClock() {
    options.setFrameTimeoutMs(500);
    echo();
    read(Arrays.copyOfRange(C, 0, 6));
    ticker.advance(400);
    read(Arrays.copyOfRange(C, 6, C.length), Arrays.copyOfRange(A, 0, 6));
    assertArrayEquals(C, socket.written().getBytes());
    assertOpenUntil(500);
    assertLingeringClose(FRAME_TIMEOUT);
  }

  /**
   * Time a frame waits for the budget is the server's, not the client's: the frame clock stops, as for any pause, and
   * runs again once the frame is admitted (the budget's turns bound the wait).
   */
  @Test
  void timeWaitingForTheBudgetDoesNotCountAgainstTheFrame() {
    ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    loop = tasks::add;
    options.setFrameTimeoutMs(500).setMaxBufferedBytes(32);
    echo();
    budget.reserve(100);
    read(Arrays.copyOfRange(frame("y".repeat(60)), 0, 34));
    assertFalse(socket.readingOn(), "34 bytes held behind 100 others hold, over a budget of 32");
    ticker.advance(2000);
    assertFalse(closing(), "waiting for the budget");
    budget.release(100);
    tasks.forEach(Runnable::run);
    assertTrue(socket.readingOn());
    assertOpenUntil(500);
    assertEquals(FRAME_TIMEOUT, closed());
  }

  @Test
  void aFrameDoesNotTimeOutWhileTheServerHoldsReading() {
    options.setFrameTimeoutMs(500);
    echoBehindAFullQueue();
    read(A, Arrays.copyOfRange(C, 0, 6));
    ticker.advance(5000);
    assertFalse(closing());

    socket.full = false;
    connection.writable();
    assertOpenUntil(500);
    assertLingeringClose(FRAME_TIMEOUT);
  }

  @Test
  void aFrameCompletedInTimeIsServed() {
    options.setFrameTimeoutMs(500);
    echo();
    read(Arrays.copyOfRange(C, 0, 6));
    ticker.advance(499);
    read(Arrays.copyOfRange(C, 6, C.length));
    ticker.advance(10_000);
    assertFalse(closing());
    assertArrayEquals(C, socket.written().getBytes());
    assertEquals(CLIENT_CLOSED, closed());
  }

  @Test
  void aClientThatDoesNotReadIsCutAfterTheWriteStallTimeout() {
    anEchoTheClientDoesNotTake();
    assertOpenUntil(300);
    assertTrue(socket.closedNow);
    assertEquals(-1, socket.lingerMs, "cut, not a lingering close");
    assertEquals(WRITE_STALL, closed());
  }

  @Test
  void aSlowReaderKeepsItsConnection() {
    anEchoTheClientDoesNotTake();
    ticker.advance(200);
    socket.pending = 50;
    ticker.advance(200);
    assertFalse(closing());

    socket.full = false;
    connection.writable();
    assertEquals(0, ticker.pending(), "the write-stall clock stops once the queue drains");
    ticker.advance(10_000);
    assertFalse(closing());
    assertTrue(socket.readingOn());
    assertEquals(CLIENT_CLOSED, closed());
  }

  @Test
  void aCloseThatCannotFlushIsCutAfterTheWriteStallTimeout() {
    options.setIdleTimeoutMs(1000).setWriteStallTimeoutMs(300);
    echo();
    socket.peerReadsNothing();
    ticker.advance(1000);
    assertEquals(LINGER, socket.lingerMs);
    assertCutAfter(300);
    assertEquals(IDLE_TIMEOUT, closed(), "the first reason stands");
  }

  /** The queue back under its mark is not the close flushed: its clock runs on. */
  @Test
  void aCloseBehindAFullQueueIsCutEvenOnceTheQueueIsUnderItsMark() {
    options.setWriteStallTimeoutMs(300);
    echoBehindAFullQueue();
    socket.peerReadsNothing();
    read(A);
    ticker.advance(100);
    connection.shutdownRequested();
    assertEquals(LINGER, socket.lingerMs);

    socket.full = false;
    connection.writable();
    assertCutAfter(200);
    assertEquals(WRITE_STALL, closed(), "a shutdown that cannot flush is a write stall");
  }

  // ---- responses no client reads, while others wait for the budget ----

  /** The budget asks, with a grace of 1000 ms, whether this connection's client reads its responses. */
  private void budgetAsks() {
    connection.evictIfNotReading(1000, 3, 2000, 1000);
  }

  /** The echo of A waits in a full queue, the write-stall clock at 8000 ms: the budget's cut comes at 2000 ms. */
  private void anEchoWaitingBehindAFullQueue() {
    options.setWriteStallTimeoutMs(8000);
    echoBehindAFullQueue();
    socket.pending = 100;
    read(A);
  }

  /** Found by a hostile trial: three such clients kept every fresh frame waiting until writeStallTimeoutMs. */
  @Test
  void aClientSentNoByteForAQuarterOfTheWriteStallTimeoutIsCutWhenTheBudgetAsks() {
    anEchoWaitingBehindAFullQueue();
    ticker.advance(1999);
    socket.msSinceDataSent = 1999;
    budgetAsks();
    assertFalse(closing(), "a quarter of writeStallTimeoutMs not reached");
    ticker.advance(1);
    socket.msSinceDataSent = 2000;
    budgetAsks();
    assertTrue(socket.closedNow, "cut, as a write stall is: the client reads nothing to linger for");
    assertEquals(BUDGET_EVICTED, closed());
  }

  /** A slow reader is sent data whenever it frees a segment of its window: Netty's count may not move for long. */
  @Test
  void aClientTheKernelStillSendsToIsNotCut() {
    anEchoWaitingBehindAFullQueue();
    ticker.advance(5000);
    socket.msSinceDataSent = 40;
    budgetAsks();
    assertFalse(closing());

    socket.msSinceDataSent = 5000;
    socket.pending = 90;
    budgetAsks();
    assertFalse(closing(), "Netty's write queue moved just now");
    ticker.advance(2000);
    budgetAsks();
    assertTrue(socket.closedNow);
    assertEquals(BUDGET_EVICTED, closed());
  }

  /** Netty's count alone cannot tell a slow reader from one that reads nothing: left to writeStallTimeoutMs. */
  @Test
  void withoutTheKernelsWordTheBudgetCutsNobody() {
    anEchoWaitingBehindAFullQueue();
    ticker.advance(7999);
    budgetAsks();
    assertFalse(closing());
    ticker.advance(1);
    assertEquals(WRITE_STALL, closed());
  }

  @Test
  void withTheWriteStallClockOffTheBudgetCutsNobody() {
    echoBehindAFullQueue();
    socket.pending = 100;
    read(A);
    ticker.advance(60_000);
    socket.msSinceDataSent = 60_000;
    budgetAsks();
    assertFalse(closing());
    assertEquals(CLIENT_CLOSED, closed());
  }

  @Test
  void aConnectionAwaitingItsAnswersIsNotCutForTheBudget() {
    options.setWriteStallTimeoutMs(8000);
    pending();
    read(A);
    ticker.advance(10_000);
    socket.msSinceDataSent = 10_000;
    budgetAsks();
    assertFalse(closing());
    answers.get(0).complete(Buffer.buffer("a"));
    assertEquals(CLIENT_CLOSED, closed());
  }

  @Test
  void closedStopsEveryClock() {
    options.setIdleTimeoutMs(1000).setFrameTimeoutMs(500).setWriteStallTimeoutMs(300);
    echoBehindAFullQueue();
    read(A, Arrays.copyOfRange(C, 0, 6));
    assertEquals(3, ticker.pending());
    assertEquals(UNEXPECTED_EOF, closed());
    assertEquals(0, ticker.pending());
  }

  // ---- shutdown: what is owed, and the first request's grace ----

  private static final long GRACE = Connection.FIRST_REQUEST_GRACE_MS;

  /** An idle pooled connection (everything answered and handed to the kernel) closes at once: no linger to wait out. */
  @Test
  void aConnectionThatOwesNothingClosesAtOnceOnShutdown() {
    echo();
    read(A, C);
    ticker.advance(GRACE);
    connection.shutdownRequested();
    assertTrue(socket.closedOwingNothing, "a FIN, then closed once the client closes its side");
    assertEquals(Math.min(LINGER, Connection.IDLE_LINGER_MS), socket.owingNothingLingerMs, "a short linger, to see what crossed the FIN");
    assertEquals(-1, socket.lingerMs, "not the drain's lingering close");
    assertArrayEquals(concat(A, C), socket.written().getBytes());
    assertEquals(SERVER_SHUTDOWN, closed());
    assertEquals(Ending.CLOSED_IDLE, connection.ending());
    assertNotEquals(Ending.CUT, connection.ending());
  }

  /** Owing an answer, it drains: the answer, then the lingering close (not counted as idle). */
  @Test
  void aConnectionOwingAnAnswerDrainsOnShutdown() {
    shutdownWithAnAnswerAwaited();
    assertFalse(closing());
    answers.get(0).complete(Buffer.buffer("last"));
    assertFalse(socket.closedOwingNothing);
    assertLingeringClose(SERVER_SHUTDOWN);
    assertNotEquals(Ending.CLOSED_IDLE, connection.ending());
  }

  /** Accepted moments before shutdown, before its bytes arrived: they are answered, then it closes. */
  @Test
  void aFreshConnectionIsAnsweredWhenItsFirstRequestsArriveAfterShutdownBegan() {
    echo();
    ticker.advance(10);
    connection.shutdownRequested();
    assertFalse(closing(), "it waits for its first request");
    assertTrue(socket.readingOn());
    read(A, B, C);
    assertArrayEquals(concat(A, B, C), socket.written().getBytes(), "the pipelined requests of its first write are answered");
    assertLingeringClose(SERVER_SHUTDOWN);
    assertNotEquals(Ending.CUT, connection.ending());
    assertNotEquals(Ending.CLOSED_IDLE, connection.ending());
    assertEquals(0, ticker.pending(), "the grace's clock is gone");
  }

  /** A first request split across reads is awaited whole, even past the grace (frameTimeoutMs and the deadline bound it). */
  @Test
  void aFirstRequestUnderWayIsAwaitedWhole() {
    echo();
    connection.shutdownRequested();
    read(Arrays.copyOfRange(C, 0, 6));
    ticker.advance(GRACE * 2);
    assertFalse(closing());
    read(Arrays.copyOfRange(C, 6, C.length));
    assertArrayEquals(C, socket.written().getBytes());
    assertLingeringClose(SERVER_SHUTDOWN);
  }

  /** A fresh connection that sends nothing closes, owing nothing, when its grace (from its accept) runs out. */
  @Test
  void aFreshConnectionThatSendsNothingClosesWhenItsGraceEnds() {
    echo();
    ticker.advance(100);
    connection.shutdownRequested();
    assertOpenUntil(GRACE - 100);
    assertTrue(socket.closedOwingNothing);
    assertEquals(SERVER_SHUTDOWN, closed());
    assertEquals(Ending.CLOSED_IDLE, connection.ending());
  }

  /** Closed during its grace, the connection leaves no clock behind. */
  @Test
  void aConnectionClosedDuringItsGraceLeavesNoClock() {
    echo();
    connection.shutdownRequested();
    assertEquals(1, ticker.pending());
    assertEquals(CLIENT_CLOSED, closed());
    assertEquals(0, ticker.pending());
  }

  /**
   * A request that reaches an idle connection after shutdown sent its FIN (its client sent it just then) is read and
   * discarded: counted as lost, and the connection is no longer "closed idle".
   */
  @Test
  void aRequestReadAfterAnIdleClosesFinIsCountedLost() {
    echo();
    read(A);
    ticker.advance(GRACE);
    connection.shutdownRequested();
    assertTrue(socket.closedOwingNothing);
    read(C);
    assertArrayEquals(A, socket.written().getBytes(), "never answered");
    assertEquals(SERVER_SHUTDOWN, closed());
    assertEquals(Ending.REQUEST_DISCARDED, connection.ending());
    assertNotEquals(Ending.CLOSED_IDLE, connection.ending());
    assertNotEquals(Ending.CUT, connection.ending());
    assertEquals(List.of(io.frameecho.server.RequestLoss.AFTER_CLOSE), metrics.requestsLost());
  }

  /** An idle close that nothing reached afterwards lost nothing. */
  @Test
  void anIdleCloseThatNothingReachedLostNothing() {
    echo();
    read(A);
    ticker.advance(GRACE);
    connection.shutdownRequested();
    assertEquals(SERVER_SHUTDOWN, closed());
    assertEquals(Ending.CLOSED_IDLE, connection.ending());
    assertEquals(List.of(), metrics.requestsLost());
  }

  /** A request under way when shutdown begins is read to its end and answered, then the connection closes. */
  @Test
  void aRequestUnderWayAtShutdownIsAnswered() {
    echo();
    read(A);
    ticker.advance(GRACE);
    read(Arrays.copyOfRange(C, 0, 6));
    connection.shutdownRequested();
    assertFalse(closing());
    read(Arrays.copyOfRange(C, 6, C.length));
    assertArrayEquals(concat(A, C), socket.written().getBytes());
    assertLingeringClose(SERVER_SHUTDOWN);
    assertNotEquals(Ending.REQUEST_DISCARDED, connection.ending());
    assertEquals(List.of(), metrics.requestsLost());
  }

  /** Shutdown's deadline finds a request still half-read and nothing else owed: that request is lost, not a cut. */
  @Test
  void aRequestStillHalfReadAtTheDeadlineIsLostNotCut() {
    echo();
    read(A);
    ticker.advance(GRACE);
    read(Arrays.copyOfRange(C, 0, 6));
    connection.shutdownRequested();
    assertFalse(closing());
    connection.cut();
    assertTrue(socket.closedOwingNothing, "a FIN: every answer it owed was delivered");
    assertFalse(socket.closedNow);
    assertArrayEquals(A, socket.written().getBytes());
    assertEquals(SERVER_SHUTDOWN, closed());
    assertEquals(Ending.REQUEST_DISCARDED, connection.ending());
    assertNotEquals(Ending.CUT, connection.ending());
    assertEquals(List.of(io.frameecho.server.RequestLoss.AFTER_CLOSE), metrics.requestsLost());
  }

  /** A frame completed after the one under way at shutdown is discarded and counted: a pipelining client cannot hold the stop. */
  @Test
  void aFrameBegunAfterTheOneUnderWayAtShutdownIsLost() {
    echo();
    ticker.advance(GRACE);
    read(Arrays.copyOfRange(C, 0, 6));
    connection.shutdownRequested();
    read(concat(Arrays.copyOfRange(C, 6, C.length), Arrays.copyOfRange(A, 0, 3)));
    assertArrayEquals(C, socket.written().getBytes());
    assertLingeringClose(SERVER_SHUTDOWN);
    assertEquals(Ending.REQUEST_DISCARDED, connection.ending());
    assertEquals(List.of(io.frameecho.server.RequestLoss.AFTER_CLOSE), metrics.requestsLost());
  }

  /** A close the client caused (its frame too large) does not count what it sends afterwards as lost. */
  @Test
  void whatFollowsAProtocolErrorIsNotCountedLost() {
    echo();
    read(new byte[] {(byte) 0xff, (byte) 0xff, 0, 0});
    read(A);
    assertEquals(CloseReason.PROTOCOL_ERROR, closed());
    assertEquals(List.of(), metrics.requestsLost());
  }
}
