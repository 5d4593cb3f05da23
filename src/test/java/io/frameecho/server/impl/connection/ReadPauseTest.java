package io.frameecho.server.impl.connection;

import io.frameecho.protocol.FrameParser;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.impl.connection.ReadPause.Reason;
import io.frameecho.testkit.RecordingMetrics;
import io.frameecho.testkit.VirtualTicker;
import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.Test;

import static io.frameecho.server.impl.connection.ReadPause.Reason.OVER_BUFFER_BUDGET;
import static io.frameecho.server.impl.connection.ReadPause.Reason.TOO_MANY_IN_FLIGHT;
import static io.frameecho.server.impl.connection.ReadPause.Reason.WRITE_QUEUE_FULL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The reasons a connection's reading is paused, seen through what they do: the socket's demand and the meters. */
class ReadPauseTest {

  private final FakeSocket socket = new FakeSocket();
  private final RecordingMetrics metrics = new RecordingMetrics();
  private final FrameParser parser = FrameParser.controlling(socket::reading, 64, new FrameParser.Listener() {
    @Override
    public void frame(ByteBuf frame) {
      frame.release();
    }

    @Override
    public void failed(Throwable error) {
    }
  });
  private final ConnectionTimers timers = new ConnectionTimers(new VirtualTicker(), new FrameEchoOptions(),
    new ConnectionTimers.Events() {
      @Override
      public boolean idle(long idleMs) {
        return false;
      }

      @Override
      public void frameTimedOut(long elapsedMs) {
      }

      @Override
      public void writeStalled() {
      }

      @Override
      public void firstRequestGraceOver() {
      }

      @Override
      public long pendingWriteBytes() {
        return 0;
      }
    });
  private final ReadPause pause = new ReadPause(parser, metrics, timers, Accounts.on(Accounts.budget()),
    new ConnectionLog(null, null, 0));

  /** Paused: no reason stands, the socket is asked for nothing, and the meter counts it paused. */
  private void assertReading(boolean reading) {
    assertEquals(reading, pause.wantRead());
    assertEquals(reading, socket.readingOn());
    assertEquals(reading ? 0 : 1, metrics.pausedNow());
  }

  @Test
  void startsReading() {
    assertReading(true);
    for (Reason reason : Reason.values()) {
      assertFalse(pause.isPausedFor(reason));
    }
  }

  @Test
  void eachReasonAlonePausesReadingAndResumesItWhenCleared() {
    for (Reason reason : Reason.values()) {
      pause.pauseFor(reason);
      assertReading(false);
      for (Reason other : Reason.values()) {
        assertEquals(other == reason, pause.isPausedFor(other), reason + " / " + other);
      }
      assertTrue(pause.resumeFrom(reason), reason.name());
      assertReading(true);
    }
    assertEquals(3, metrics.pauses());
  }

  @Test
  void readingResumesOnlyWhenTheLastReasonClears() {
    pause.pauseFor(WRITE_QUEUE_FULL);
    pause.pauseFor(OVER_BUFFER_BUDGET);
    assertEquals(1, metrics.pauses(), "a second reason, though reading was paused already, is not a second pause");

    assertFalse(pause.resumeFrom(WRITE_QUEUE_FULL));
    assertReading(false);
    assertTrue(pause.isPausedFor(OVER_BUFFER_BUDGET));

    assertTrue(pause.resumeFrom(OVER_BUFFER_BUDGET));
    assertReading(true);
  }

  @Test
  void pausingTwiceForOneReasonIsIdempotent() {
    pause.pauseFor(TOO_MANY_IN_FLIGHT);
    pause.pauseFor(TOO_MANY_IN_FLIGHT);
    assertEquals(1, metrics.pauses());
    assertTrue(pause.resumeFrom(TOO_MANY_IN_FLIGHT), "one resume clears it however often it was paused");
    assertReading(true);
  }

  @Test
  void resumingAReasonNotSetChangesNothing() {
    assertFalse(pause.resumeFrom(WRITE_QUEUE_FULL));
    assertReading(true);
    assertEquals(0, metrics.resumes());

    pause.pauseFor(TOO_MANY_IN_FLIGHT);
    assertFalse(pause.resumeFrom(WRITE_QUEUE_FULL));
    assertReading(false);
    assertTrue(pause.isPausedFor(TOO_MANY_IN_FLIGHT));
  }

  @Test
  void pausedOnlyForIgnoresNoOtherReason() {
    pause.pauseFor(OVER_BUFFER_BUDGET);
    assertTrue(pause.isPausedOnlyFor(OVER_BUFFER_BUDGET));
    assertFalse(pause.isPausedOnlyFor(WRITE_QUEUE_FULL));

    pause.pauseFor(WRITE_QUEUE_FULL);
    assertFalse(pause.isPausedOnlyFor(OVER_BUFFER_BUDGET));

    pause.resumeFrom(OVER_BUFFER_BUDGET);
    assertTrue(pause.isPausedOnlyFor(WRITE_QUEUE_FULL));
  }

  /** Stopped for good, the reasons are still kept and cleared for the meters, but reading never resumes. */
  @Test
  void stoppedForGoodKeepsTheReasonsButNeverResumes() {
    pause.pauseFor(WRITE_QUEUE_FULL);
    pause.stopForGood();
    assertTrue(pause.isPausedFor(WRITE_QUEUE_FULL));

    assertFalse(pause.resumeFrom(WRITE_QUEUE_FULL), "reading does not restart");
    assertTrue(pause.wantRead(), "wantRead means no reason stands, not that reading may start");
    assertFalse(socket.readingOn());
    assertEquals(0, metrics.pausedNow(), "the meter no longer counts it paused");
    pause.pauseFor(TOO_MANY_IN_FLIGHT);
    assertTrue(pause.isPausedFor(TOO_MANY_IN_FLIGHT), "reasons are still kept once stopped");
  }

  @Test
  void closingBalancesThePausedMeterOnce() {
    pause.closed();
    assertEquals(0, metrics.resumes(), "nothing stood");

    pause.pauseFor(WRITE_QUEUE_FULL);
    pause.pauseFor(TOO_MANY_IN_FLIGHT);
    pause.stopForGood();
    pause.closed();
    assertEquals(0, metrics.pausedNow());
    assertTrue(pause.wantRead());
    assertFalse(pause.resumeFrom(TOO_MANY_IN_FLIGHT), "nothing left to resume");
    pause.closed();
    assertEquals(1, metrics.resumes());
  }
}
