package io.frameecho.server.impl.connection;

import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.impl.shared.BudgetAccount;
import io.frameecho.server.impl.shared.BufferBudget;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static io.frameecho.server.impl.connection.Wire.concat;
import static io.frameecho.server.impl.connection.Wire.frame;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class EchoWriterTest {

  private static final byte[] A = frame("alpha");
  private static final byte[] B = frame("");
  private static final byte[] C = frame("charlie!");

  private final BufferBudget budget = Accounts.budget();
  private final BudgetAccount account = Accounts.on(budget);
  private final FakeSocket socket = new FakeSocket();
  private final EchoWriter echo = new EchoWriter(new ResponseWriter(socket, account, new ConnectionLog(null, null, 0)), account, FrameEchoMetrics.NONE);
  private final Wire.Reads reads = new Wire.Reads();

  /**
   * One read holding {@code frames}, counted in the budget, cut into a retained slice per frame as the parser
   * delivers them; the read itself is released, as the parser does.
   */
  private List<ByteBuf> read(byte[]... frames) {
    ByteBuf read = reads.read(frames);
    account.received(read.readableBytes());
    List<ByteBuf> slices = new ArrayList<>();
    for (byte[] frame : frames) {
      slices.add(read.readRetainedSlice(frame.length));
    }
    read.release();
    return slices;
  }

  private void request(ByteBuf frame) {
    echo.request(frame, frame.readableBytes(), 0);
  }

  @AfterEach
  void everythingReleased() {
    reads.assertReleased();
    assertEquals(0, budget.used());
  }

  @Test
  void adjacentFramesOfOneReadGoOutAsOneWriteAtTheEndOfTheRead() {
    read(A, B, C).forEach(this::request);
    assertEquals(0, socket.writes.size(), "nothing is written before the read is done");

    echo.readDone();
    assertEquals(1, socket.writes.size());
    assertArrayEquals(concat(A, B, C), socket.writes.get(0));
  }

  @Test
  void eachWriteReleasesItsOwnBudgetWhenItIsWrittenInTheOrderMade() {
    socket.completeAtOnce = false;
    List<Integer> held = new ArrayList<>();
    for (int i = 0; i < 9; i++) {
      byte[] frame = frame("x".repeat(i * 7));
      read(frame).forEach(this::request);
      echo.readDone();
      held.add(frame.length);
    }
    assertEquals(9, socket.writes.size(), "a write per read, none written yet");
    long used = held.stream().mapToLong(Integer::longValue).sum();
    assertEquals(used, budget.used());
    for (int bytes : held) {
      socket.completeOldestWrite();
      used -= bytes;
      assertEquals(used, budget.used(), "the oldest write releases what it held, no more");
    }
  }

  @Test
  void theRunHoldsItsBudgetUntilWritten() {
    socket.completeAtOnce = false;
    read(A, B, C).forEach(this::request);
    echo.readDone();
    assertEquals(A.length + B.length + C.length, budget.used());

    socket.completeWrites(true);
    assertEquals(0, budget.used());
  }

  @Test
  void aFrameFromAnotherBufferBreaksTheRun() {
    List<ByteBuf> first = read(A, B);
    List<ByteBuf> second = read(C);
    request(first.get(0));
    request(first.get(1));
    request(second.get(0));
    assertEquals(1, socket.writes.size(), "the run is written when a frame cannot join it");
    assertArrayEquals(concat(A, B), socket.writes.get(0));

    echo.readDone();
    assertEquals(2, socket.writes.size());
    assertArrayEquals(C, socket.writes.get(1));
  }

  @Test
  void aGapInTheBufferBreaksTheRun() {
    List<ByteBuf> frames = read(A, B, C);
    request(frames.get(0));
    ByteBuf skipped = frames.get(1);
    account.release(skipped.readableBytes());
    skipped.release();
    request(frames.get(2));
    echo.readDone();
    assertEquals(2, socket.writes.size());
    assertArrayEquals(A, socket.writes.get(0));
    assertArrayEquals(C, socket.writes.get(1));
  }

  /** Heap buffers have no memory address to prove adjacency: each frame goes out alone, still byte-exact. */
  @Test
  void heapFramesAreWrittenOneByOne() {
    ByteBuf read = Unpooled.wrappedBuffer(concat(A, C));
    account.received(read.readableBytes());
    request(read.readRetainedSlice(A.length));
    request(read.readRetainedSlice(C.length));
    read.release();
    echo.readDone();
    assertEquals(0, read.refCnt());
    assertEquals(2, socket.writes.size());
    assertArrayEquals(concat(A, C), socket.written().getBytes());
  }

  /**
   * A read as the socket delivers it when Netty's leak detector tracks it (one in 128 at the default level,
   * every one at the tests' paranoid level): each frame is a wrapper of the detector's, and joining them would
   * release the read through a slice it does not see (a false leak report): they go out one by one, in order.
   */
  @Test
  void aReadTheLeakDetectorTracksGoesOutFrameByFrameInOrder() {
    assumeTrue(ResourceLeakDetector.getLevel() == ResourceLeakDetector.Level.PARANOID, "every buffer tracked");
    ByteBuf read = ByteBufAllocator.DEFAULT.directBuffer().writeBytes(concat(A, B, C));
    account.received(read.readableBytes());
    request(read.readRetainedSlice(A.length));
    request(read.readRetainedSlice(B.length));
    request(read.readRetainedSlice(C.length));
    read.release();
    echo.readDone();
    assertEquals(0, read.refCnt());
    assertArrayEquals(concat(A, B, C), socket.written().getBytes());
    assertEquals(3, socket.writes.size());
  }

  @Test
  void flushWritesTheRun() {
    read(A, C).forEach(this::request);
    echo.flush();
    assertEquals(1, socket.writes.size());
    assertArrayEquals(concat(A, C), socket.writes.get(0));
    echo.readDone();
    assertEquals(1, socket.writes.size(), "nothing is left to write");
  }

  @Test
  void dropReleasesTheRunAndReturnsItsBudget() {
    read(A, B, C).forEach(this::request);
    assertEquals(A.length + B.length + C.length, budget.used());

    assertFalse(echo.drop(), "an echo owes no answer it has not written");
    assertEquals(0, budget.used());
    echo.readDone();
    assertEquals(0, socket.writes.size());
    assertFalse(echo.drop());
  }

  @Test
  void neverAwaitingNorFull() {
    read(A, B, C).forEach(this::request);
    assertFalse(echo.awaiting());
    assertFalse(echo.full());
    echo.readDone();
  }
}
