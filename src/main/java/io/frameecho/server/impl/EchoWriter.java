package io.frameecho.server.impl;

import io.netty.buffer.ByteBuf;

/**
 * The built-in echo: each request frame, header included, is its own response, written back without a
 * copy. Frames that lie one after the other in the same read go back as one slice of it, in one write, at
 * the end of the read (a "run").
 */
final class EchoWriter implements Responses {

  private final ResponseWriter writer;
  private final BudgetAccount budget;
  private final FrameEchoMetrics metrics;
  /** The first request frame of the run not written yet, or null; the run's length and its budget. */
  private ByteBuf run;
  private int runBytes;
  private int runHeld;

  EchoWriter(ResponseWriter writer, BudgetAccount budget, FrameEchoMetrics metrics) {
    this.writer = writer;
    this.budget = budget;
    this.metrics = metrics;
  }

  @Override
  public void request(ByteBuf frame, int heldBytes, long receivedNanos) {
    if (run != null && followsRun(frame)) {
      runBytes += frame.readableBytes();
      runHeld += heldBytes;
      frame.release();
    } else {
      writeRun();
      run = frame;
      runBytes = frame.readableBytes();
      runHeld = heldBytes;
    }
    metrics.responseQueued(receivedNanos);
  }

  /** Whether {@code frame} starts where the run ends, in the same buffer (so the run can grow over it). */
  private boolean followsRun(ByteBuf frame) {
    ByteBuf buffer = run.unwrap();
    return buffer != null && buffer == frame.unwrap() && buffer.hasMemoryAddress() && frame.hasMemoryAddress()
      && run.memoryAddress() + runBytes == frame.memoryAddress();
  }

  private void writeRun() {
    ByteBuf frames = run;
    if (frames == null) {
      return;
    }
    run = null;
    if (runBytes != frames.readableBytes()) {
      ByteBuf buffer = frames.unwrap();
      ByteBuf whole = buffer.retainedSlice((int) (frames.memoryAddress() - buffer.memoryAddress()), runBytes);
      frames.release();
      frames = whole;
    }
    writer.write(frames, runHeld);
  }

  @Override
  public void readDone() {
    writeRun();
  }

  @Override
  public boolean awaiting() {
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
      budget.release(runHeld);
    }
    return false;
  }
}
