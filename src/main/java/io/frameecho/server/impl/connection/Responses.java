package io.frameecho.server.impl.connection;

import io.netty.buffer.ByteBuf;

/**
 * How one connection answers its request frames, chosen once when it opens: {@link EchoWriter} for the
 * built-in echo (the request frame is the response), {@link OrderedAnswers} for any other application.
 */
interface Responses {

  /**
   * A complete request frame, header included, which this now owns; it holds {@code heldBytes} of the
   * budget, and arrived at {@code receivedNanos} (for the latency meter). Returns true when reading may have to
   * stop: a write filled the queue, or every answer slot is taken ({@link #full()}).
   */
  boolean request(ByteBuf frame, int heldBytes, long receivedNanos);

  /** The frames of one read have all been handed over; true when a write filled the queue. */
  boolean readDone();

  /** True while answers are owed that the application has not given yet. */
  boolean awaiting();

  /** True while as many answers are awaited as may be ({@code handler.maxInFlight}): reading stops. */
  boolean full();

  /** The connection is about to close after its answers: write whatever is still held back. */
  void flush();

  /** The connection closed: release what is held; true when answers owed were dropped. */
  boolean drop();
}
