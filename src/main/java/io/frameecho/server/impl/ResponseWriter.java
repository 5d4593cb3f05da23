package io.frameecho.server.impl;

import io.frameecho.protocol.Frames;
import io.netty.buffer.ByteBuf;
import io.vertx.core.buffer.Buffer;

/**
 * The book's {@code handle_write}: response frames join the socket's write queue (the book's
 * {@code Conn::outgoing}); the budget they hold is released once they are written, and a full queue
 * stops reading.
 */
final class ResponseWriter {

  private final ChannelAdapter channel;
  private final BudgetAccount budget;
  private final ReadGate gate;
  /** A response could not be written: the connection ends cut rather than drained. */
  private boolean lost;

  ResponseWriter(ChannelAdapter channel, BudgetAccount budget, ReadGate gate) {
    this.channel = channel;
    this.budget = budget;
    this.gate = gate;
  }

  /** Whole frames, header included, holding {@code heldBytes} of the budget until written. */
  void write(ByteBuf frames, int heldBytes) {
    if (heldBytes > 0) {
      channel.write(frames).onComplete(ar -> written(heldBytes, ar.succeeded()));
    } else {
      channel.write(frames);
    }
    stopReadingIfFull();
  }

  /** A frame around an application's {@code payload}, which holds budget while it waits to be written. */
  void writeFrame(Buffer payload) {
    int length = payload.length();
    channel.write(Frames.header(length));
    if (length > 0) {
      budget.hold(length);
      channel.write(payload).onComplete(ar -> written(length, ar.succeeded()));
    }
    stopReadingIfFull();
  }

  private void written(int heldBytes, boolean succeeded) {
    budget.release(heldBytes);
    if (!succeeded) {
      lost = true;
    }
  }

  private void stopReadingIfFull() {
    if (channel.writeQueueFull()) {
      gate.pause(ReadGate.Reason.WRITE_QUEUE_FULL);
    }
  }

  boolean writeQueueFull() {
    return channel.writeQueueFull();
  }

  /** True when a response could not be written. */
  boolean lost() {
    return lost;
  }
}
