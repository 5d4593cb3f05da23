package io.frameecho.server.impl.connection;

import io.frameecho.protocol.LengthField;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.RequestHandler;
import io.frameecho.server.impl.shared.BudgetAccount;
import io.netty.buffer.ByteBuf;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Responses for any application but echo: each request goes to the {@link RequestHandler}, and the answers, which may
 * complete later and in any order, are written in request order. At {@code handler.maxInFlight} awaited answers it is
 * {@link #full()}. Answers that complete later are written by one queued task, so those completed meanwhile leave in
 * one write and one flush.
 */
final class OrderedAnswers implements Responses {

  /** What the answers tell their connection. */
  interface Listener {
    /** Answers were written or dropped: the connection may be done, or read again. */
    void answered();

    /** The handler failed: the answers before this one are written, the rest dropped. */
    void handlerFailed(Throwable cause);
  }

  /**
   * An awaited answer and the request bytes it holds in the budget: until written, or, once dropped, until the answer
   * completes, since till then the handler may still hold the request.
   */
  private static final class Awaited {
    final Future<Buffer> answer;
    final int heldBytes;
    final long receivedNanos;
    final Buffer prefix;

    Awaited(Future<Buffer> answer, int heldBytes, long receivedNanos, Buffer prefix) {
      this.answer = answer;
      this.heldBytes = heldBytes;
      this.receivedNanos = receivedNanos;
      this.prefix = prefix;
    }
  }

  private final RequestHandler handler;
  private final int maxInFlight;
  private final ResponseWriter writer;
  private final LengthField form;
  private final BudgetAccount budget;
  private final FrameEchoMetrics metrics;
  private final Listener listener;
  private final Executor loop;
  /** A write task is queued; an answer may complete on another thread. */
  private final AtomicBoolean writeQueued = new AtomicBoolean();
  /** Answers not written yet, oldest first. */
  private final ArrayDeque<Awaited> awaited = new ArrayDeque<>();
  /** The connection has closed, or the handler failed: later answers only release their bytes. */
  private boolean dropped;

  OrderedAnswers(RequestHandler handler, int maxInFlight, ResponseWriter writer, BudgetAccount budget,
                 FrameEchoMetrics metrics, Listener listener, Executor loop) {
    this.handler = handler;
    this.maxInFlight = maxInFlight;
    this.writer = writer;
    this.form = writer.form();
    this.budget = budget;
    this.metrics = metrics;
    this.listener = listener;
    this.loop = loop;
  }

  @Override
  public boolean request(ByteBuf frame, int heldBytes, long receivedNanos) {
    Buffer prefix = prefix(frame);
    Buffer payload = form.message(frame);
    Future<Buffer> answer;
    try {
      answer = handler.handle(payload);
    } catch (RuntimeException e) {
      answer = Future.failedFuture(e);
    }
    if (answer == null) {
      answer = Future.failedFuture(new NullPointerException("the request handler returned null instead of a future"));
    }
    if (awaited.isEmpty() && answer.isComplete()) {
      return write(answer, heldBytes, receivedNanos, prefix);
    }
    Awaited entry = new Awaited(answer, heldBytes, receivedNanos, prefix);
    awaited.add(entry);
    answer.onComplete(ar -> answered(entry));
    return full();
  }

  /** On the thread that completed the answer: everything else happens on the loop, in one task for those completed meanwhile. */
  private void answered(Awaited completed) {
    if (writeQueued.compareAndSet(false, true)) {
      loop.execute(this::writeAnswered);
    }
  }

  /**
   * Writes the completed answers at the head of the queue, stopping at the first pending one; once dropped, releases
   * the bytes of every completed one.
   */
  private void writeAnswered() {
    writeQueued.set(false);
    if (dropped) {
      releaseCompleted();
      return;
    }
    Awaited head;
    while ((head = awaited.peek()) != null && head.answer.isComplete()) {
      awaited.poll();
      if (gather(head.answer, head.heldBytes, head.receivedNanos, head.prefix)) {
        break;
      }
    }
    writer.writeGathered();
    listener.answered();
  }

  /** Each entry leaves the queue once: written, or here, so its bytes are released once. */
  private void releaseCompleted() {
    awaited.removeIf(entry -> {
      if (entry.answer.isComplete()) {
        budget.release(entry.heldBytes);
        return true;
      }
      return false;
    });
  }

  /** Writes one answer, or fails the connection with it; true when the write filled the queue. */
  private boolean write(Future<Buffer> answer, int heldBytes, long receivedNanos, Buffer prefix) {
    return !gather(answer, heldBytes, receivedNanos, prefix) && writer.writeGathered();
  }

  /**
   * The request's bytes before a length field at an offset, which its answer carries back as the echo does; null when
   * the handler sees the whole frame (it writes them itself) or there are none.
   */
  private Buffer prefix(ByteBuf frame) {
    int offset = form.lengthFieldOffset();
    if (offset == 0 || !form.stripHeader()) {
      return null;
    }
    byte[] bytes = new byte[offset];
    frame.getBytes(frame.readerIndex(), bytes);
    return Buffer.buffer(bytes);
  }

  /** Gathers one answer, or on a failed answer writes those gathered and fails the connection (then true). */
  private boolean gather(Future<Buffer> answer, int heldBytes, long receivedNanos, Buffer prefix) {
    Buffer response = answer.succeeded() ? answer.result() : null;
    if (response != null && form.fits(response.length())) {
      writer.gatherFrame(response, heldBytes, prefix);
      metrics.responseQueued(receivedNanos);
      return false;
    }
    writer.writeGathered();
    budget.release(heldBytes);
    // Answers behind a failed one are dropped: the connection ends after what came before.
    drop();
    listener.handlerFailed(answer.failed() ? answer.cause()
      : response != null ? new IllegalArgumentException("the request handler's answer of " + response.length()
        + " bytes cannot be framed as " + form)
      : new NullPointerException("the request handler's future completed with null instead of a response"));
    return true;
  }

  @Override
  public boolean readDone() {
    return false;
  }

  @Override
  public boolean awaiting() {
    return !dropped && !awaited.isEmpty();
  }

  @Override
  public boolean full() {
    return !dropped && awaited.size() >= maxInFlight;
  }

  @Override
  public void flush() {
  }

  @Override
  public boolean drop() {
    boolean lost = awaiting();
    dropped = true;
    // The rest stay queued until they complete (writeAnswered).
    releaseCompleted();
    return lost;
  }
}
