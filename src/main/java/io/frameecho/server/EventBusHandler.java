package io.frameecho.server;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Answers each request frame with the reply to an event-bus request: the payload goes as a
 * {@code Buffer} body to an address (served on any node of a clustered Vert.x), and the reply's body,
 * which must be a {@code Buffer}, is the response payload. A timeout or a failure reply fails the answer,
 * which ends that connection after the earlier responses.
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
  private final DeliveryOptions delivery;
  private final DeliveryOptions probe;
  /** Set when a request or probe found no consumer; cleared when a probe finds one. */
  private final AtomicBoolean consumerMissing = new AtomicBoolean();
  private volatile boolean stopped;

  public EventBusHandler(Vertx vertx, String address, long timeoutMs) {
    this.vertx = vertx;
    this.address = address;
    this.delivery = new DeliveryOptions().setSendTimeout(timeoutMs);
    this.probe = new DeliveryOptions().setSendTimeout(timeoutMs).addHeader(PROBE_HEADER, "1");
  }

  @Override
  public Future<Buffer> handle(Buffer request) {
    return vertx.eventBus().request(address, request, delivery).compose(reply -> {
      Object body = reply.body();
      if (body instanceof Buffer) {
        return Future.succeededFuture((Buffer) body);
      }
      return Future.failedFuture(new IllegalStateException("the reply from " + address + " is not a Buffer but "
        + (body == null ? "null" : body.getClass().getName())));
    }, failure -> {
      if (noConsumer(failure)) {
        consumerGone();
      }
      return Future.failedFuture(failure);
    });
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
        log.info("the event-bus address {} has a consumer again", address);
      } else {
        probeLater();
      }
    }));
  }
}
