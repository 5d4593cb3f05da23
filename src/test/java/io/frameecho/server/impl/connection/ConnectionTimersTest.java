package io.frameecho.server.impl.connection;

import io.frameecho.server.FrameEchoOptions;
import io.frameecho.testkit.VirtualTicker;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConnectionTimersTest {

  private static final long IDLE = 1000;
  private static final long FRAME = 500;
  private static final long STALL = 300;

  /** The {@code idleMs} of each idle event, the {@code elapsedMs} of each frame time-out, and the stalls. */
  private final List<Long> idles = new ArrayList<>();
  private final List<Long> frameTimeouts = new ArrayList<>();
  private int stalls;
  /** What the connection answers to an idle event: false while it is busy. */
  private boolean idleCloses = true;
  /** The clock the timers run on, and the bytes their write queue holds. */
  private final VirtualTicker ticker = new VirtualTicker();
  private long pending;

  private final ConnectionTimers.Events events = new ConnectionTimers.Events() {
    @Override
    public boolean idle(long idleMs) {
      idles.add(idleMs);
      return idleCloses;
    }

    @Override
    public void frameTimedOut(long elapsedMs) {
      frameTimeouts.add(elapsedMs);
    }

    @Override
    public void writeStalled() {
      stalls++;
    }

    @Override
    public void firstRequestGraceOver() {
      gracesOver++;
    }

    @Override
    public long pendingWriteBytes() {
      return pending;
    }
  };
  private int gracesOver;

  private ConnectionTimers timers(long idleMs, long frameMs, long stallMs) {
    ConnectionTimers timers = new ConnectionTimers(ticker, new FrameEchoOptions().setIdleTimeoutMs(idleMs).setFrameTimeoutMs(frameMs)
      .setWriteStallTimeoutMs(stallMs), events);
    timers.start();
    return timers;
  }

  /** Frame clock only: a frame starts, is read for 100 ms, then reading pauses for 300 ms and resumes. */
  private ConnectionTimers aFramePausedFor300MsAfter100() {
    ConnectionTimers timers = timers(0, FRAME, 0);
    timers.frameStarted();
    ticker.advance(100);
    timers.readingPaused();
    ticker.advance(300);
    timers.readingResumed();
    return timers;
  }

  /** Write-stall clock only: 100 bytes wait in the write queue. */
  private ConnectionTimers aWriteWaiting() {
    ConnectionTimers timers = timers(0, 0, STALL);
    pending = 100;
    timers.writeWaiting();
    return timers;
  }

  /** No idle event until {@code ms} from now, and one, of {@code IDLE}, at {@code ms}. */
  private void assertIdleFiresAfter(long ms) {
    ticker.advance(ms - 1);
    assertEquals(List.of(), idles);
    ticker.advance(1);
    assertEquals(List.of(IDLE), idles);
  }

  /** No frame time-out until {@code ms} from now, and one, of {@code FRAME} elapsed, at {@code ms}. */
  private void assertFrameTimesOutAfter(long ms) {
    ticker.advance(ms - 1);
    assertEquals(List.of(), frameTimeouts);
    ticker.advance(1);
    assertEquals(List.of(FRAME), frameTimeouts);
  }

  /** No write stall until {@code ms} from now, and one at {@code ms}. */
  private void assertWriteStallsAfter(long ms) {
    assertWriteStallsAfter(ms, null);
  }

  private void assertWriteStallsAfter(long ms, String message) {
    ticker.advance(ms - 1);
    assertEquals(0, stalls);
    ticker.advance(1);
    assertEquals(1, stalls, message);
  }

  /** Not one event of any clock while {@code ms} pass. */
  private void assertNothingFiresWithin(long ms) {
    ticker.advance(ms);
    assertTrue(idles.isEmpty() && frameTimeouts.isEmpty() && stalls == 0);
  }

  // ---- idle ----

  @Test
  void idleFiresOneTimeoutAfterTheStartWithoutARequest() {
    timers(IDLE, 0, 0);
    assertIdleFiresAfter(IDLE);
    assertEquals(0, ticker.pending(), "once the connection closes for it, the idle clock stops");
  }

  @Test
  void aRequestPushesIdleBack() {
    ConnectionTimers timers = timers(IDLE, 0, 0);
    ticker.advance(600);
    timers.requestArrived();
    assertIdleFiresAfter(IDLE);
  }

  @Test
  void aBusyConnectionStartsTheIdleClockOver() {
    idleCloses = false;
    timers(IDLE, 0, 0);
    ticker.advance(IDLE);
    assertEquals(List.of(IDLE), idles);

    ticker.advance(IDLE - 1);
    assertEquals(1, idles.size());
    ticker.advance(1);
    assertEquals(List.of(IDLE, 2 * IDLE), idles, "idleMs counts from the last request, not from the last look");
  }

  // ---- a frame under way ----

  @Test
  void aFrameTimesOutOneTimeoutAfterItStarted() {
    ConnectionTimers timers = timers(0, FRAME, 0);
    ticker.advance(100);
    timers.frameStarted();
    assertFrameTimesOutAfter(FRAME);
  }

  @Test
  void timeTheServerPausedReadingDoesNotCount() {
    aFramePausedFor300MsAfter100();
    assertFrameTimesOutAfter(FRAME - 100);
  }

  @Test
  void aFrameDoesNotTimeOutWhileReadingStaysPaused() {
    ConnectionTimers timers = timers(0, FRAME, 0);
    timers.frameStarted();
    timers.readingPaused();
    ticker.advance(10 * FRAME);
    assertEquals(List.of(), frameTimeouts);

    timers.readingResumed();
    assertFrameTimesOutAfter(FRAME);
  }

  /** A pause that began before the frame is credited from the frame's start only. */
  @Test
  void aPauseBeforeTheFrameStartedIsNotCreditedToIt() {
    ConnectionTimers timers = timers(0, FRAME, 0);
    timers.readingPaused();
    ticker.advance(1000);
    timers.frameStarted();
    ticker.advance(200);
    timers.readingResumed();
    assertFrameTimesOutAfter(FRAME);
  }

  @Test
  void aNewFrameRestartsTheFrameClock() {
    ConnectionTimers timers = timers(0, FRAME, 0);
    timers.frameStarted();
    ticker.advance(400);
    timers.frameStarted();
    assertFrameTimesOutAfter(FRAME);
  }

  @Test
  void aNewFrameGetsNoCreditForThePreviousFramesPause() {
    ConnectionTimers timers = aFramePausedFor300MsAfter100();
    ticker.advance(50);
    timers.frameStarted();
    assertFrameTimesOutAfter(FRAME);
  }

  // ---- write stall ----

  @Test
  void writesThatDoNotMoveStallOneTimeoutAfterTheQueueFilled() {
    aWriteWaiting();
    assertWriteStallsAfter(STALL);
  }

  @Test
  void aSecondWriteWaitingDoesNotRearmTheClock() {
    ConnectionTimers timers = aWriteWaiting();
    ticker.advance(200);
    timers.writeWaiting();
    ticker.advance(STALL - 200);
    assertEquals(1, stalls);
  }

  @Test
  void progressRestartsTheWriteStallClockFromTheCheckThatSawIt() {
    aWriteWaiting();
    ticker.advance(200);
    pending = 99;
    // The clock looks every quarter of the timeout: the check at 225 ms sees the byte taken.
    ticker.advance(STALL - 200);
    assertEquals(0, stalls, "a byte taken is progress");
    assertEquals(1, ticker.pending());

    // One timeout after that check: 225 ms from now.
    assertWriteStallsAfter(3 * (STALL / 4), "no progress since the check that saw the last");
  }

  /**
   * Found by a hostile trial: the kernel takes its share of a queue just after it fills; checked once per timeout, that
   * counted as progress, and a client that read nothing was closed after two timeouts.
   */
  @Test
  void whatTheKernelTakesAsTheQueueFillsDelaysAStallByAQuarterOfTheTimeoutAtMost() {
    aWriteWaiting();
    ticker.advance(1);
    pending = 40;
    assertWriteStallsAfter(STALL / 4 + STALL - 1, "one timeout after the check that saw the kernel's share");
  }

  @Test
  void aDrainedQueueStopsTheWriteStallClock() {
    ConnectionTimers timers = aWriteWaiting();
    ticker.advance(STALL - 1);
    timers.writeDrained();
    assertEquals(0, ticker.pending());
    ticker.advance(10 * STALL);
    assertEquals(0, stalls);
  }

  // ---- off, and cancelled ----

  @Test
  void eachClockOffAtZeroSchedulesNothing() {
    ConnectionTimers idleOff = timers(0, FRAME, STALL);
    assertEquals(0, ticker.pending(), "idle off: start schedules nothing");
    idleOff.requestArrived();
    assertEquals(0, ticker.pending());

    ConnectionTimers frameOff = timers(IDLE, 0, STALL);
    assertEquals(1, ticker.pending());
    frameOff.frameStarted();
    frameOff.readingPaused();
    frameOff.readingResumed();
    assertEquals(1, ticker.pending(), "frame clock off: only the idle clock");
    frameOff.cancelAll();

    ConnectionTimers stallOff = timers(IDLE, FRAME, 0);
    stallOff.cancelAll();
    pending = 100;
    stallOff.writeWaiting();
    assertEquals(0, ticker.pending(), "write-stall clock off");

    assertNothingFiresWithin(100 * IDLE);
  }

  @Test
  void cancelAllLeavesNothingPending() {
    ConnectionTimers timers = timers(IDLE, FRAME, STALL);
    timers.frameStarted();
    timers.writeWaiting();
    assertEquals(3, ticker.pending());

    timers.cancelAll();
    assertEquals(0, ticker.pending());
    assertNothingFiresWithin(100 * IDLE);
  }

  @Test
  void theFirstRequestGraceRunsFromTheStartAndEndsOnce() {
    ConnectionTimers timers = timers(0, 0, 0);
    long started = ticker.nanoTime();
    ticker.advance(200);
    assertTrue(timers.awaitFirstRequest(500, started));
    assertTrue(timers.awaitFirstRequest(500, started), "asked again: still waiting, not armed twice");
    ticker.advance(299);
    assertEquals(0, gracesOver);
    ticker.advance(1);
    assertEquals(1, gracesOver);
    ticker.advance(10_000);
    assertEquals(1, gracesOver);
    assertFalse(timers.awaitFirstRequest(500, started), "started more than the grace ago: nothing to wait for");
  }

  @Test
  void theFirstRequestGraceIsCancelledWithTheOtherClocks() {
    ConnectionTimers timers = timers(0, 0, 0);
    assertTrue(timers.awaitFirstRequest(500, ticker.nanoTime()));
    timers.cancelAll();
    ticker.advance(1000);
    assertEquals(0, gracesOver);
    assertEquals(0, ticker.pending());
  }
}
