package io.frameecho.server.impl.connection;

import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.impl.shared.BudgetAccount;
import io.netty.buffer.ByteBuf;

/**
 * The built-in echo: each request frame, header included, is its own response, written back without a copy.
 * Adjacent frames of one read are written as one slice of it at the end of the read.
 */
final class EchoWriter implements Responses {

  private final ResponseWriter writer;
  private final BudgetAccount budget;
  private final FrameEchoMetrics metrics;
  /** The unwritten run's first frame (or null), the read it was sliced from, its length and its budget. */
  private ByteBuf run;
  private ByteBuf runRead;
  private int runBytes;
  private int runHeld;

  EchoWriter(ResponseWriter writer, BudgetAccount budget, FrameEchoMetrics metrics) {
    this.writer = writer;
    this.budget = budget;
    this.metrics = metrics;
  }

  @Override
  public boolean request(ByteBuf frame, int heldBytes, long receivedNanos) {
    boolean filled = false;
    if (run != null && followsRun(frame)) {
      runBytes += frame.readableBytes();
      runHeld += heldBytes;
      frame.release();
    } else {
      filled = run != null && writeRun();
      run = frame;
      runBytes = frame.readableBytes();
      runHeld = heldBytes;
    }
    metrics.responseQueued(receivedNanos);
    return filled;
  }

  /**
   * Whether {@code frame} starts where the run ends, in the same read. A read tracked by Netty's leak detector is not
   * joined: a slice of the read beneath its wrappers would release it unseen, reported as a leak.
   */
  private boolean followsRun(ByteBuf frame) {
    ByteBuf read = runRead;
    if (read == null) {
      read = runRead = run.unwrap();
    }
    return read != null && read == frame.unwrap() && read.hasMemoryAddress() && frame.hasMemoryAddress()
      && run.memoryAddress() + runBytes == frame.memoryAddress();
  }

  /** Writes the run, if any; true when that filled the queue. */
  private boolean writeRun() {
    ByteBuf frames = run;
    if (frames == null) {
      return false;
    }
    run = null;
    ByteBuf read = runRead;
    runRead = null;
    if (runBytes != frames.readableBytes()) {
      ByteBuf whole = read.retainedSlice((int) (frames.memoryAddress() - read.memoryAddress()), runBytes);
      frames.release();
      frames = whole;
    }
    return writer.write(frames, runHeld);
  }

  @Override
  public boolean readDone() {
    return writeRun();
  }

  @Override
  public boolean awaiting() {
    return false;
  }

  @Override
  public boolean full() {
    return false;
  }

  @Override
  public void flush() {
    writeRun();
  }

  @Override
  public boolean drop() {
    if (run != null) {
      run.release();
      run = null;
      runRead = null;
      budget.release(runHeld);
    }
    return false;
  }
}
