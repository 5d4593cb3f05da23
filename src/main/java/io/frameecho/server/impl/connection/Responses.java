package io.frameecho.server.impl.connection;

import io.netty.buffer.ByteBuf;

/** How a connection answers its requests: {@link EchoWriter} for the built-in echo, else {@link OrderedAnswers}. */
interface Responses {

  /**
   * Takes ownership of a whole request frame holding {@code heldBytes} of the budget; true when reading may have to
   * stop (the write queue filled, or {@link #full()}).
   */
  boolean request(ByteBuf frame, int heldBytes, long receivedNanos);

  /** The frames of one read have all been handed over; true when a write filled the queue. */
  boolean readDone();

  /** True while answers are owed that the application has not given yet. */
  boolean awaiting();

  /** True while {@code handler.maxInFlight} answers are awaited: reading stops. */
  boolean full();

  /** Writes whatever is still held back, before the connection closes. */
  void flush();

  /** Releases what is held once the connection closed; true when owed answers were dropped. */
  boolean drop();
}
