package io.frameecho.server;

import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
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
 * with its node costs a client that long, not a failure. Vert.x says nothing public about which node a request went
 * to, nor when a node's connection drops, so without re-sending a request a lost node had fails at {@code timeoutMs}.
 * <p>
 * Memory: Vert.x may hold a copy of a request after its answer (a re-sent request's other copies; a timed-out one,
 * queued toward a node that stopped reading, until Vert.x closes that connection). The handler counts those in the
 * server's buffer budget ({@link #countHeldBytes}) until their reply, or for
 * {@link HandlerOptions#setHeldAfterTimeoutMs heldAfterTimeoutMs} after a timeout on a clustered Vert.x.
 * <p>
 * It also knows whether the address has a consumer, for readiness: a request that finds none (Vert.x's
 * {@code NO_HANDLERS}) says there is none, with one WARN line; from then on, once a second, a probe (an empty
 * {@code Buffer} with the header {@value #PROBE_HEADER}) asks again until one is there, with one INFO line. The
 * server probes once at start too. A consumer may answer a probe or ignore it.
 */
public final class EventBusHandler implements RequestHandler {

  /** The header that marks a probe: a consumer may answer it with anything, or not at all. */
  public static final String PROBE_HEADER = "frame-echo-probe";
  private static final long PROBE_INTERVAL_MS = 1000;
  private static final Logger log = LoggerFactory.getLogger(EventBusHandler.class);

  private final Vertx vertx;
  private final String address;
  private final long timeoutMs;
  private final long resendAfterMs;
  /** 0 on a Vert.x that is not clustered: a local consumer holds no copy of ours after a timeout. */
  private final long heldAfterTimeoutMs;
  private final DeliveryOptions delivery;
  private final DeliveryOptions probe;
  /** Set when a request or probe found no consumer; cleared when a probe finds one. */
  private final AtomicBoolean consumerMissing = new AtomicBoolean();
  private volatile boolean stopped;
  private volatile FrameEchoMetrics metrics = FrameEchoMetrics.NONE;
  private volatile LongConsumer held = delta -> { };
  private volatile LongPredicate roomFor = bytes -> true;

  public EventBusHandler(Vertx vertx, String address, long timeoutMs) {
    this(vertx, new HandlerOptions().setType(HandlerOptions.EVENT_BUS).setAddress(address).setTimeoutMs(timeoutMs));
  }

  /** The handler {@code options} describe (their address, timeout, re-sending and holding). */
  public EventBusHandler(Vertx vertx, HandlerOptions options) {
    this.vertx = vertx;
    this.address = options.getAddress();
    this.timeoutMs = options.getTimeoutMs();
    this.resendAfterMs = options.getResendAfterMs();
    this.heldAfterTimeoutMs = vertx.isClustered() ? options.getHeldAfterTimeoutMs() : 0;
    this.delivery = new DeliveryOptions().setSendTimeout(timeoutMs);
    this.probe = new DeliveryOptions().setSendTimeout(timeoutMs).addHeader(PROBE_HEADER, "1");
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
    if (resendAfterMs == 0 || resendAfterMs >= timeoutMs) {
      return vertx.eventBus().<Object>request(address, request, delivery).transform(ar -> answerOf(ar, request.length()));
    }
    return new Request(request).send();
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
      consumerGone();
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

  /** One request sent, and re-sent every resendAfterMs until answered: its attempts and its answer, on the caller's context. */
  private final class Request {

    private final Buffer payload;
    private final Promise<Buffer> answer = Promise.promise();
    private final long deadlineNanos;
    /** Attempts without a reply yet; the first one is counted by the connection while the answer is awaited. */
    private final List<Attempt> pending = new ArrayList<>(2);
    private long resendTimer = -1;
    /** The last attempt's failure: the answer's, when nothing is out and no re-send is left. */
    private EventBusFailure lastWhy;
    private Throwable lastFailure;

    Request(Buffer payload) {
      this.payload = payload;
      this.deadlineNanos = System.nanoTime() + timeoutMs * 1_000_000;
    }

    Future<Buffer> send() {
      Attempt first = new Attempt(false);
      pending.add(first);
      vertx.eventBus().<Object>request(address, payload, delivery).onComplete(first);
      resendTimer = vertx.setTimer(resendAfterMs, id -> resend());
      return answer.future();
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
          consumerGone();
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
    return !consumerMissing.get();
  }

  /** Probes the address now (the server does at start): one WARN line, and probing on, when nobody consumes it. */
  public Future<Boolean> checkConsumer() {
    return probe().onSuccess(present -> {
      if (!present) {
        consumerGone();
      } else {
        metrics.eventBusConsumer(true);
      }
    });
  }

  /** No more probes (the server has closed). */
  public void stopChecking() {
    stopped = true;
  }

  private static boolean noConsumer(Throwable failure) {
    return failure instanceof ReplyException e && e.failureType() == ReplyFailure.NO_HANDLERS;
  }

  /** Completes with false when nobody consumes the address; a reply, a failure reply or a timeout all mean someone does. */
  private Future<Boolean> probe() {
    return vertx.eventBus().request(address, Buffer.buffer(), probe).transform(ar -> Future.succeededFuture(
      ar.succeeded() || !noConsumer(ar.cause())));
  }

  private void consumerGone() {
    if (consumerMissing.compareAndSet(false, true)) {
      metrics.eventBusConsumer(false);
      log.warn("no consumer on the event-bus address {}: requests fail and /health/ready says 503 until one appears "
        + "(asked again every {} ms)", address, PROBE_INTERVAL_MS);
      probeLater();
    }
  }

  private void probeLater() {
    if (stopped) {
      return;
    }
    vertx.setTimer(PROBE_INTERVAL_MS, id -> probe().onSuccess(present -> {
      if (present) {
        consumerMissing.set(false);
        metrics.eventBusConsumer(true);
        log.info("the event-bus address {} has a consumer again", address);
      } else {
        probeLater();
      }
    }));
  }
}
