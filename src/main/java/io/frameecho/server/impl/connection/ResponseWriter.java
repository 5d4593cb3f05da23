package io.frameecho.server.impl.connection;

import io.frameecho.protocol.LengthField;
import io.frameecho.server.impl.shared.BudgetAccount;
import io.netty.buffer.ByteBuf;
import io.vertx.core.buffer.Buffer;

/**
 * Writes response frames to the socket's write queue; the budget they hold is released once they are written. A write
 * that takes the queue over its mark is noted, and the connection stops reading when it asks.
 */
final class ResponseWriter {

  /** The largest payload copied to leave with others in one write: up to here a copy costs less than a system call. */
  static final int GATHER_MAX = 8192;

  private final ConnectionSocket socket;
  private final BudgetAccount budget;
  private final ConnectionLog log;
  private final LengthField form;
  private final boolean ownForm;
  /** A write took the queue over its mark since the connection last asked. */
  private boolean filled;
  /** A response could not be written: the connection ends cut rather than drained. */
  private boolean lost;
  /** Small frames gathered for one write, null when none wait. */
  private Buffer gathered;
  /** The budget the gathered payloads hold until written. */
  private int gatheredBytes;

  ResponseWriter(ConnectionSocket socket, BudgetAccount budget, ConnectionLog log) {
    this(socket, budget, log, LengthField.DEFAULT);
  }

  ResponseWriter(ConnectionSocket socket, BudgetAccount budget, ConnectionLog log, LengthField form) {
    this.socket = socket;
    this.budget = budget;
    this.log = log;
    this.form = form;
    this.ownForm = form.isDefault();
  }

  /** The form of the frames written, which an answer must {@link LengthField#fits fit}. */
  LengthField form() {
    return form;
  }

  /**
   * Whole frames, header included, holding {@code heldBytes} of the budget until written; true when the queue
   * is over its mark now.
   */
  boolean write(ByteBuf frames, int heldBytes) {
    boolean tracing = log.tracingWrites();
    int bytes = tracing ? frames.readableBytes() : 0;
    if (heldBytes > 0) {
      socket.write(frames).onComplete(ar -> written(heldBytes, ar.succeeded()));
    } else if (tracing) {
      socket.write(frames).onComplete(ar -> log.answersWritten(bytes, ar.succeeded()));
    } else {
      socket.write(frames);
    }
    filled |= socket.writeQueueFull();
    if (tracing) {
      log.answersQueued(bytes, socket.writeQueueFull());
    }
    return filled;
  }

  /**
   * Frames {@code payload}, which takes its request's {@code requestBytes} in the budget in one step: released first,
   * the request would show room the response then takes; held first, both would count at once. {@code prefix}, when
   * not null, is the header's bytes before its length field.
   */
  private boolean writeFrame(Buffer payload, int requestBytes, Buffer prefix) {
    int length = payload.length();
    Buffer body = payload;
    if (ownForm) {
      socket.write(Buffer.buffer(LengthField.DEFAULT.headerSize()).appendIntLE(length));
    } else {
      // A kept header alone is written with the budget's callback.
      Buffer header = header(payload, prefix);
      body = form.body(payload);
      if (body.length() == 0) {
        body = header;
      } else {
        socket.write(header);
      }
    }
    budget.exchange(requestBytes, length);
    if (body.length() > 0) {
      socket.write(body).onComplete(ar -> written(length, ar.succeeded()));
    }
    filled |= socket.writeQueueFull();
    if (log.tracingWrites()) {
      log.answersQueued((form.stripHeader() ? form.headerSize() : 0) + length, socket.writeQueueFull());
    }
    return filled;
  }

  /** Like {@link #writeFrame}, but frames up to {@value #GATHER_MAX} bytes are copied into one buffer until {@link #writeGathered}. */
  void gatherFrame(Buffer payload, int requestBytes, Buffer prefix) {
    int length = payload.length();
    if (length > GATHER_MAX) {
      writeGathered();
      writeFrame(payload, requestBytes, prefix);
      return;
    }
    if (gathered == null) {
      gathered = Buffer.buffer(form.headerSize() + length);
    }
    if (ownForm) {
      gathered.appendIntLE(length).appendBuffer(payload);
    } else {
      gathered.appendBuffer(header(payload, prefix)).appendBuffer(form.body(payload));
    }
    budget.exchange(requestBytes, length);
    gatheredBytes += length;
  }

  private Buffer header(Buffer payload, Buffer prefix) {
    Buffer header = form.header(payload);
    return prefix == null ? header : header.setBuffer(0, prefix);
  }

  /** Writes the gathered frames, if any; true as {@link #write}. */
  boolean writeGathered() {
    if (gathered == null) {
      return filled;
    }
    Buffer frames = gathered;
    int held = gatheredBytes;
    gathered = null;
    gatheredBytes = 0;
    socket.write(frames).onComplete(ar -> written(held, ar.succeeded()));
    filled |= socket.writeQueueFull();
    if (log.tracingWrites()) {
      log.answersQueued(frames.length(), socket.writeQueueFull());
    }
    return filled;
  }

  private void written(int heldBytes, boolean succeeded) {
    log.answersWritten(heldBytes, succeeded);
    budget.release(heldBytes);
    if (!succeeded) {
      lost = true;
    }
  }

  /** Whether a write took the queue over its mark since the last call: reading should stop. */
  boolean queueFilled() {
    boolean was = filled;
    filled = false;
    return was;
  }

  /** Whether the queue is over its mark now. */
  boolean writeQueueFull() {
    return socket.writeQueueFull();
  }

  /** True when a response could not be written. */
  boolean lost() {
    return lost;
  }
}
