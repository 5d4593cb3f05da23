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
 * The application half of the book's {@code try_one_request} for any application but echo: each request
 * payload goes to the {@link RequestHandler}, and the answers, which may complete later and in any order,
 * are written in request order. At {@code handler.maxInFlight} awaited answers it is {@link #full()}, and the
 * connection stops reading.
 * <p>
 * Answers that complete later (an event-bus reply is a task of its own on the loop) are written by one task on the
 * connection's loop, queued by the first of them: the replies already queued behind it complete first, and all leave
 * in one write, one flush, rather than a system call each.
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
   * An answer the application has not given yet, with the request bytes it holds in the budget until the answer is
   * written, or, once the connection has dropped it, until the answer completes: till then the handler may hold the
   * request (an event-bus message in flight to a node).
   */
  private static final class Awaited {
    final Future<Buffer> answer;
    final int heldBytes;
    final long receivedNanos;
    /** Its bytes left the budget (written, or released). */
    boolean settled;

    Awaited(Future<Buffer> answer, int heldBytes, long receivedNanos) {
      this.answer = answer;
      this.heldBytes = heldBytes;
      this.receivedNanos = receivedNanos;
    }
  }

  private final RequestHandler handler;
  private final int maxInFlight;
  private final ResponseWriter writer;
  /** The frames' form: a request's message is read, and an answer framed, by it. */
  private final LengthField form;
  private final BudgetAccount budget;
  private final FrameEchoMetrics metrics;
  private final Listener listener;
  private final Executor loop;
  /** A task to write the completed answers is queued on the loop (an answer may complete on another thread). */
  private final AtomicBoolean writeQueued = new AtomicBoolean();
  /** Answers not written yet, oldest first; stays empty while answers complete at once. */
  private final ArrayDeque<Awaited> awaited = new ArrayDeque<>();
  /** The connection has closed: what is still awaited was dropped, and answers that come later are ignored. */
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
      return write(answer, heldBytes, receivedNanos);
    }
    Awaited entry = new Awaited(answer, heldBytes, receivedNanos);
    awaited.add(entry);
    answer.onComplete(ar -> answered(entry));
    return full();
  }

  private void answered(Awaited completed) {
    if (dropped) {
      // The connection has closed: an answer that comes after is nobody's, and the handler has let go of its request.
      settle(completed);
    } else if (writeQueued.compareAndSet(false, true)) {
      loop.execute(this::writeAnswered);
    }
  }

  /** Writes every answer at the head of the queue that has completed, stopping at the first pending one. */
  private void writeAnswered() {
    writeQueued.set(false);
    if (dropped) {
      // drop() settled the completed ones.
      return;
    }
    Awaited head;
    while ((head = awaited.peek()) != null && head.answer.isComplete()) {
      awaited.poll();
      head.settled = true;
      if (gather(head.answer, head.heldBytes, head.receivedNanos)) {
        break;
      }
    }
    writer.writeGathered();
    listener.answered();
  }

  private void settle(Awaited entry) {
    if (!entry.settled) {
      entry.settled = true;
      budget.release(entry.heldBytes);
    }
  }

  /** Writes one answer, or fails the connection with it; true when the write filled the queue. */
  private boolean write(Future<Buffer> answer, int heldBytes, long receivedNanos) {
    return !gather(answer, heldBytes, receivedNanos) && writer.writeGathered();
  }

  /** Gathers one answer to be written, or writes those gathered and fails the connection with it (then true). */
  private boolean gather(Future<Buffer> answer, int heldBytes, long receivedNanos) {
    Buffer response = answer.succeeded() ? answer.result() : null;
    if (response != null && form.fits(response.length())) {
      writer.gatherFrame(response, heldBytes);
      metrics.responseQueued(receivedNanos);
      return false;
    }
    writer.writeGathered();
    budget.release(heldBytes);
    // Answers queued behind a failed one are dropped: the connection ends after what came before.
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
    return !awaited.isEmpty();
  }

  @Override
  public boolean full() {
    return awaited.size() >= maxInFlight;
  }

  @Override
  public void flush() {
  }

  @Override
  public boolean drop() {
    dropped = true;
    boolean lost = !awaited.isEmpty();
    Awaited next;
    while ((next = awaited.poll()) != null) {
      if (next.answer.isComplete()) {
        settle(next);
      }
      // else: released when it completes, as the handler lets go of the request.
    }
    return lost;
  }
}
