package io.frameecho.server.impl;

import io.frameecho.server.EventBusFailure;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.HandlerOptions;
import io.frameecho.server.RequestHandler;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxException;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;
import java.util.function.LongPredicate;

/**
 * Answers each request frame with the reply to an event-bus request: the payload goes as a
 * {@code Buffer} body to an address (served on any node of a clustered Vert.x), and the reply's body,
 * which must be a {@code Buffer}, is the response payload. A timeout or a failure reply fails the answer,
 * which ends that connection after the earlier responses.
 * <p>
 * With {@link HandlerOptions#setResendAfterMs resendAfterMs} (idempotent applications only), a request not
 * answered in that time is sent again, within {@code timeoutMs}, and the first reply is the answer: a consumer lost
 * with its node costs a client that long, not a failure.
 * <p>
 * On a clustered Vert.x, the handler reads the cluster's members while requests are in flight ({@link MemberWatch}):
 * Vert.x does not say which node a request went to, so when a node leaves, each request in flight then and not
 * answered within {@link HandlerOptions#setNodeLeftGraceMs nodeLeftGraceMs} fails at once
 * ({@link EventBusFailure#NODE_LEFT}), or, with re-sending, is sent again at once; and until the cluster manager has
 * dropped the departed node's consumers (Vert.x could still pick it), a new request waits, then goes: a lost node costs
 * its requests the cluster's failure detection plus the grace, not {@code timeoutMs}.
 * <p>
 * Memory: Vert.x may hold a copy of a request after its answer (a re-sent request's other copies; a timed-out one,
 * queued toward a node that stopped reading, until Vert.x closes that connection). The handler counts those in the
 * server's buffer budget ({@link #countHeldBytes}) until their reply, or for
 * {@link HandlerOptions#setHeldAfterTimeoutMs heldAfterTimeoutMs} after a timeout on a clustered Vert.x.
 * <p>
 * It also knows whether the address has a consumer, for readiness: a request that finds none (Vert.x's
 * {@code NO_HANDLERS}) says there is none, with one WARN line; from then on, once a second, a probe (an empty
 * {@code Buffer} with the header {@value HandlerOptions#PROBE_HEADER}) asks again until one is there, with one INFO line. The
 * server probes at start too, and on a clustered Vert.x each time a node leaves (the members are read once a second
 * while idle), so that the last consumer's node going turns readiness off before a request fails. A consumer may
 * answer a probe or ignore it.
 */
public final class EventBusHandler implements RequestHandler {

  private final Vertx vertx;
  private final String address;
  private final long timeoutMs;
  private final long resendAfterMs;
  /** 0 on a Vert.x that is not clustered: a local consumer holds no copy of ours after a timeout. */
  private final long heldAfterTimeoutMs;
  private final boolean resending;
  private final long nodeLeftGraceMs;
  /** Null when no node can leave (not clustered) or nodeLeftGraceMs is 0. */
  private final MemberWatch watch;
  private final DeliveryOptions delivery;
  private final ConsumerProbe consumers;
  private volatile FrameEchoMetrics metrics = FrameEchoMetrics.NONE;
  private volatile LongConsumer held = delta -> { };
  private volatile LongPredicate roomFor = bytes -> true;

  public EventBusHandler(Vertx vertx, String address, long timeoutMs) {
    this(vertx, new HandlerOptions().setType(HandlerOptions.EVENT_BUS).setAddress(address).setTimeoutMs(timeoutMs));
  }

  /** The handler {@code options} describe (their address, timeout, re-sending and holding). */
  public EventBusHandler(Vertx vertx, HandlerOptions options) {
    this(vertx, options, MemberWatch.clusterOf(vertx));
  }

  /** Reading {@code cluster} (null: no node can leave) for the nodes that leave. */
  EventBusHandler(Vertx vertx, HandlerOptions options, MemberWatch.Cluster cluster) {
    this.vertx = vertx;
    this.address = options.getAddress();
    this.timeoutMs = options.getTimeoutMs();
    this.resendAfterMs = options.getResendAfterMs();
    this.heldAfterTimeoutMs = vertx.isClustered() ? options.getHeldAfterTimeoutMs() : 0;
    this.resending = resendAfterMs > 0 && resendAfterMs < timeoutMs;
    this.nodeLeftGraceMs = options.getNodeLeftGraceMs();
    this.watch = cluster == null || nodeLeftGraceMs == 0 ? null : new MemberWatch(vertx, cluster, address, nodeLeftGraceMs, timeoutMs);
    this.delivery = new DeliveryOptions().setSendTimeout(timeoutMs);
    this.consumers = new ConsumerProbe(vertx, address, timeoutMs);
  }

  /**
   * Where the server counts: {@code metrics} for failures, re-sends and the consumer's presence; {@code heldBytes},
   * told each change (in bytes, from any thread) of what Vert.x may hold beyond the awaited requests the server counts
   * itself; and {@code roomFor}, asked before a re-send whether that many more bytes fit in the budget (a re-send that
   * does not fit waits for the next turn, so that copies toward a node that stopped reading stay within the budget).
   * The server calls it at start; the last call wins.
   */
  public void countHeldBytes(FrameEchoMetrics metrics, LongConsumer heldBytes, LongPredicate roomFor) {
    this.metrics = metrics;
    this.held = heldBytes;
    this.roomFor = roomFor;
  }

  @Override
  public Future<Buffer> handle(Buffer request) {
    if (!resending && watch == null) {
      return vertx.eventBus().<Object>request(address, request, delivery).transform(ar -> answerOf(ar, request.length()));
    }
    return new Request(request).start();
  }

  /** The answer to a request sent once ({@code bytes} long): the reply, or the failure, counted by cause. */
  private Future<Buffer> answerOf(AsyncResult<Message<Object>> ar, int bytes) {
    if (ar.succeeded()) {
      Object body = ar.result().body();
      if (body instanceof Buffer buffer) {
        return Future.succeededFuture(buffer);
      }
      metrics.eventBusAnswerFailed(EventBusFailure.NOT_A_BUFFER);
      return Future.failedFuture(notABuffer(body));
    }
    EventBusFailure why = classify(ar.cause());
    if (why == EventBusFailure.TIMEOUT) {
      holdAfterTimeout(bytes);
    } else if (why == EventBusFailure.NO_CONSUMER) {
      consumers.gone(metrics);
    }
    metrics.eventBusAnswerFailed(why);
    return Future.failedFuture(ar.cause());
  }

  /** A timed-out request's copy may wait toward a node that stopped reading: counted for heldAfterTimeoutMs. */
  private void holdAfterTimeout(long bytes) {
    if (heldAfterTimeoutMs > 0) {
      hold(bytes);
      vertx.setTimer(heldAfterTimeoutMs, id -> hold(-bytes));
    }
  }

  private IllegalStateException notABuffer(Object body) {
    return new IllegalStateException("the reply from " + address + " is not a Buffer but "
      + (body == null ? "null" : body.getClass().getName()));
  }

  /**
   * One request sent, and with re-sending sent again every resendAfterMs until answered, or sooner when a node left:
   * its attempts and its answer, on the caller's context.
   */
  private final class Request implements MemberWatch.Watched {

    private final Context context = vertx.getOrCreateContext();
    private final Buffer payload;
    private final Promise<Buffer> answer = Promise.promise();
    private final long deadlineNanos;
    /** Attempts without a reply yet; the first one is counted by the connection while the answer is awaited. */
    private final List<Attempt> pending = new ArrayList<>(2);
    private long resendTimer = -1;
    /** A node left while it was in flight: the grace runs. */
    private boolean suspected;
    /** False while it waits for the cluster to drop a departed node. */
    private boolean sent;
    /** The last attempt's failure: the answer's, when nothing is out and no re-send is left. */
    private EventBusFailure lastWhy;
    private Throwable lastFailure;

    Request(Buffer payload) {
      this.payload = payload;
      this.deadlineNanos = System.nanoTime() + timeoutMs * 1_000_000;
    }

    Future<Buffer> start() {
      if (watch == null || watch.add(this)) {
        sendFirst(delivery);
      }
      return answer.future();
    }

    /** Sent once it has waited while a departed node could be picked, in what is left of its timeout. */
    @Override
    public void send() {
      long leftMs = (deadlineNanos - System.nanoTime()) / 1_000_000;
      if (answer.future().isComplete()) {
        return;
      }
      if (leftMs <= 0) {
        failed(EventBusFailure.TIMEOUT, VertxException.noStackTrace("no reply from " + address + " within " + timeoutMs
          + " ms: it waited that long for the cluster to drop a departed node"));
        return;
      }
      sendFirst(new DeliveryOptions().setSendTimeout(leftMs));
    }

    private void sendFirst(DeliveryOptions options) {
      sent = true;
      Attempt first = new Attempt(false);
      pending.add(first);
      vertx.eventBus().<Object>request(address, payload, options).onComplete(first);
      if (resending && !answer.future().isComplete()) {
        resendTimer = vertx.setTimer(resendAfterMs, id -> resend());
      }
      if (watch != null && watch.suspecting()) {
        nodeLeft();
      }
    }

    @Override
    public Context context() {
      return context;
    }

    @Override
    public void nodeLeft() {
      if (sent && !suspected && !answer.future().isComplete()) {
        suspected = true;
        vertx.setTimer(nodeLeftGraceMs, id -> graceOver());
      }
    }

    /** Still unanswered a grace after a node left: it may have gone to that node, which will never answer. */
    private void graceOver() {
      suspected = false;
      if (answer.future().isComplete()) {
        return;
      }
      if (resending) {
        if (resendTimer != -1) {
          vertx.cancelTimer(resendTimer);
        }
        resend();
        // Vert.x may have picked the departed node again: this copy gets a grace too.
        if (watch.suspecting()) {
          nodeLeft();
        }
      } else {
        failed(EventBusFailure.NODE_LEFT, VertxException.noStackTrace("no reply from " + address + " within "
          + nodeLeftGraceMs + " ms after a cluster node left (the request may have gone to it)"));
      }
    }

    private void resend() {
      resendTimer = -1;
      if (answer.future().isComplete()) {
        return;
      }
      long leftMs = (deadlineNanos - System.nanoTime()) / 1_000_000;
      if (leftMs > 0 && roomFor.test(payload.length())) {
        Attempt again = new Attempt(true);
        pending.add(again);
        hold(payload.length());
        metrics.eventBusResent();
        vertx.eventBus().<Object>request(address, payload, new DeliveryOptions().setSendTimeout(leftMs)).onComplete(again);
      }
      if (leftMs > resendAfterMs) {
        resendTimer = vertx.setTimer(resendAfterMs, id -> resend());
      } else if (pending.isEmpty()) {
        // Nothing out (every attempt failed) and no turn left.
        failed(lastWhy, lastFailure);
      }
    }

    /** One request message; {@code counted} once the handler holds its bytes in the budget (not the connection). */
    private final class Attempt implements io.vertx.core.Handler<AsyncResult<Message<Object>>> {
      boolean counted;

      Attempt(boolean counted) {
        this.counted = counted;
      }

      @Override
      public void handle(AsyncResult<Message<Object>> ar) {
        pending.remove(this);
        Throwable failure = ar.failed() ? ar.cause() : null;
        boolean timedOut = failure instanceof ReplyException e && e.failureType() == ReplyFailure.TIMEOUT;
        letGo(timedOut);
        if (answer.future().isComplete()) {
          return;
        }
        if (failure == null) {
          Object body = ar.result().body();
          if (body instanceof Buffer buffer) {
            answered(buffer);
          } else {
            failed(EventBusFailure.NOT_A_BUFFER, notABuffer(body));
          }
          return;
        }
        EventBusFailure why = classify(failure);
        lastWhy = why;
        lastFailure = failure;
        if (why == EventBusFailure.NO_CONSUMER) {
          consumers.gone(metrics);
        }
        // A consumer's own failure is its answer; other failures wait for a re-sent copy, if one may still come.
        if (why == EventBusFailure.CONSUMER_FAILED || (pending.isEmpty() && resendTimer == -1)) {
          failed(why, failure);
        }
      }

      /** Vert.x is done with this copy, unless it timed out toward a node that may still hold it. */
      private void letGo(boolean timedOut) {
        if (counted) {
          hold(-payload.length());
          counted = false;
        }
        if (timedOut) {
          holdAfterTimeout(payload.length());
        }
      }
    }

    private void answered(Buffer response) {
      finish();
      answer.complete(response);
    }

    private void failed(EventBusFailure why, Throwable failure) {
      finish();
      metrics.eventBusAnswerFailed(why);
      answer.fail(failure);
    }

    /** The answer is given: the connection lets go of the request, so the handler counts the copies still out. */
    private void finish() {
      if (watch != null) {
        watch.remove(this);
      }
      if (resendTimer != -1) {
        vertx.cancelTimer(resendTimer);
        resendTimer = -1;
      }
      for (Attempt out : pending) {
        if (!out.counted) {
          out.counted = true;
          hold(payload.length());
        }
      }
    }
  }

  private void hold(long delta) {
    held.accept(delta);
    metrics.eventBusHeld(delta);
  }

  private static EventBusFailure classify(Throwable failure) {
    if (failure instanceof ReplyException e) {
      return switch (e.failureType()) {
        case TIMEOUT -> EventBusFailure.TIMEOUT;
        case NO_HANDLERS -> EventBusFailure.NO_CONSUMER;
        case RECIPIENT_FAILURE -> EventBusFailure.CONSUMER_FAILED;
        default -> EventBusFailure.OTHER;
      };
    }
    return EventBusFailure.OTHER;
  }

  /** The address had a consumer at the last request or probe (true until one finds none). */
  public boolean hasConsumer() {
    return consumers.present();
  }

  /**
   * Probes the address now (the server does at start): one WARN line, and probing on, when nobody consumes it. On a
   * clustered Vert.x it then probes again each time a node leaves, once the cluster manager has dropped it, until
   * {@link #stopChecking}.
   */
  public Future<Boolean> checkConsumer() {
    if (watch != null) {
      watch.watchIdle(() -> consumers.check(metrics));
    }
    return consumers.check(metrics);
  }

  /** No more probes (the server has closed). */
  public void stopChecking() {
    consumers.stop();
    if (watch != null) {
      watch.stop();
    }
  }
}
