package io.frameecho.testkit;

import io.frameecho.server.CloseReason;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.HandshakeFailure;
import io.frameecho.server.Rejection;
import io.frameecho.server.RequestLoss;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * A {@link FrameEchoMetrics} that records what the server decided (close reasons, rejections, protocol errors,
 * reading paused and resumed, requests), so that a test waits for the event itself rather than for a log line's
 * wording. Connections of several event loops may report at once: the counts are thread-safe, and a waiter is
 * completed by whichever event loop reported.
 * <p>
 * A server reports an event in the middle of one step on its event loop: a connection reports its close before it
 * gives back its place in the connection limits, say. So a future of {@link #until} completes only once the step
 * that made its condition hold has finished (it is completed from a task run after it on the same event loop): what
 * the server settled in that step is settled when the test goes on. The accessors ({@link #closedFor} and the rest)
 * read the counts as they are now.
 */
public final class RecordingMetrics implements FrameEchoMetrics {

  private final List<CloseReason> closed = new CopyOnWriteArrayList<>();
  private final List<Rejection> rejected = new CopyOnWriteArrayList<>();
  private final List<HandshakeFailure> handshakesFailed = new CopyOnWriteArrayList<>();
  private final List<RequestLoss> lost = new CopyOnWriteArrayList<>();
  private final AtomicLong protocolErrors = new AtomicLong();
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong pauses = new AtomicLong();
  private final AtomicLong resumes = new AtomicLong();
  private final AtomicLong pausedNow = new AtomicLong();
  /** The event loops that have reported, where a waiter whose condition already holds is completed. */
  private final Set<Context> reporters = ConcurrentHashMap.newKeySet();
  private final List<Waiter> waiters = new ArrayList<>();

  private record Waiter(Predicate<RecordingMetrics> condition, Promise<Void> promise) {
  }

  @Override
  public long requestReceived(int payloadBytes) {
    // Per frame: a count, and no waiter is checked (nothing waits for a request count).
    requests.incrementAndGet();
    return 0;
  }

  @Override
  public void requestLost(RequestLoss how) {
    // Reported just before the connection's close, which wakes the waiters.
    lost.add(how);
  }

  /** The connections that lost a request, by how, in the order they reported. */
  public List<RequestLoss> requestsLost() {
    return List.copyOf(lost);
  }

  @Override
  public void connectionClosed(CloseReason reason) {
    Context reporter = reporter();
    closed.add(reason);
    recorded(reporter);
  }

  @Override
  public void connectionRejected(Rejection why) {
    Context reporter = reporter();
    rejected.add(why);
    recorded(reporter);
  }

  @Override
  public void handshakeFailed(HandshakeFailure why) {
    Context reporter = reporter();
    handshakesFailed.add(why);
    recorded(reporter);
  }

  @Override
  public void protocolError() {
    Context reporter = reporter();
    protocolErrors.incrementAndGet();
    recorded(reporter);
  }

  @Override
  public void readingPaused() {
    Context reporter = reporter();
    pauses.incrementAndGet();
    pausedNow.incrementAndGet();
    recorded(reporter);
  }

  @Override
  public void readingResumed() {
    Context reporter = reporter();
    resumes.incrementAndGet();
    pausedNow.decrementAndGet();
    recorded(reporter);
  }

  /** The event loop reporting now (noted before the count changes, so that a waiter finds it), or null off Vert.x. */
  private Context reporter() {
    Context context = Vertx.currentContext();
    if (context != null) {
      reporters.add(context);
    }
    return context;
  }

  private void recorded(Context reporter) {
    List<Waiter> done = new ArrayList<>();
    synchronized (waiters) {
      for (Waiter w : waiters) {
        if (w.condition.test(this)) {
          done.add(w);
        }
      }
      waiters.removeAll(done);
    }
    for (Waiter w : done) {
      if (reporter == null) {
        w.promise.tryComplete();
      } else {
        // After the step that reported: a task on the same event loop runs once that step has returned.
        reporter.runOnContext(v -> w.promise.tryComplete());
      }
    }
  }

  /**
   * Completes once {@code condition} holds: from a task run after the step whose report made it hold, on that
   * step's event loop, or, if it holds already, after the current step of every event loop that has reported.
   */
  public Future<Void> until(Predicate<RecordingMetrics> condition) {
    Promise<Void> promise = Promise.promise();
    synchronized (waiters) {
      if (!condition.test(this)) {
        waiters.add(new Waiter(condition, promise));
        return promise.future();
      }
    }
    List<Future<Void>> stepsDone = new ArrayList<>();
    for (Context reporter : reporters) {
      Promise<Void> stepDone = Promise.promise();
      reporter.runOnContext(v -> stepDone.complete());
      stepsDone.add(stepDone.future());
    }
    Future.all(stepsDone).onComplete(ar -> promise.tryComplete());
    return promise.future();
  }

  /** Completes once {@code count} connections have closed for {@code reason}. */
  public Future<Void> closed(CloseReason reason, long count) {
    return until(m -> m.closedFor(reason) >= count);
  }

  /** Completes once a connection has closed for {@code reason}. */
  public Future<Void> closed(CloseReason reason) {
    return closed(reason, 1);
  }

  /** Completes once {@code count} connections have closed, whatever their reasons. */
  public Future<Void> closes(long count) {
    return until(m -> m.closeReasons().size() >= count);
  }

  /** Completes once {@code count} connections have been turned away for {@code why}. */
  public Future<Void> rejected(Rejection why, long count) {
    return until(m -> m.rejectedFor(why) >= count);
  }

  /** Completes once {@code count} TLS handshakes have failed for {@code why}. */
  public Future<Void> handshakesFailed(HandshakeFailure why, long count) {
    return until(m -> m.handshakesFailedFor(why) >= count);
  }

  public long handshakesFailedFor(HandshakeFailure why) {
    return handshakesFailed.stream().filter(r -> r == why).count();
  }

  /** Completes once some connection has stopped reading and not resumed since: reading is paused now. */
  public Future<Void> paused() {
    return until(m -> m.pausedNow() > 0);
  }

  public long closedFor(CloseReason reason) {
    return closed.stream().filter(r -> r == reason).count();
  }

  /** Every close so far, in the order reported. */
  public List<CloseReason> closeReasons() {
    return List.copyOf(closed);
  }

  public long rejectedFor(Rejection why) {
    return rejected.stream().filter(r -> r == why).count();
  }

  public long protocolErrors() {
    return protocolErrors.get();
  }

  /** Request frames completed so far. */
  public long requests() {
    return requests.get();
  }

  /** How many times a connection stopped reading. */
  public long pauses() {
    return pauses.get();
  }

  /** How many times a connection started reading again (or closed while paused). */
  public long resumes() {
    return resumes.get();
  }

  /** Connections whose reading is paused now: pauses not yet balanced by a resume. */
  public long pausedNow() {
    return pausedNow.get();
  }
}
