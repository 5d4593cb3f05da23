package io.frameecho.server.impl;

import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.HandlerOptions;
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
 * Whether the event-bus handler's address has a consumer, for readiness: see {@link EventBusHandler}'s probes. Its
 * lines are the handler's. <b>Threading:</b> any thread.
 */
final class ConsumerProbe {

  private static final long PROBE_INTERVAL_MS = 1000;
  private static final Logger log = LoggerFactory.getLogger(EventBusHandler.class);

  private final Vertx vertx;
  private final String address;
  private final DeliveryOptions probe;
  /** Set when a request or probe found no consumer; cleared when a probe finds one. */
  private final AtomicBoolean missing = new AtomicBoolean();
  private volatile boolean stopped;

  ConsumerProbe(Vertx vertx, String address, long timeoutMs) {
    this.vertx = vertx;
    this.address = address;
    this.probe = new DeliveryOptions().setSendTimeout(timeoutMs).addHeader(HandlerOptions.PROBE_HEADER, "1");
  }

  boolean present() {
    return !missing.get();
  }

  /** Probes now: the meter and, when nobody consumes the address, one WARN line and probing on. */
  Future<Boolean> check(FrameEchoMetrics metrics) {
    return probe().onSuccess(present -> {
      if (!present) {
        gone(metrics);
      } else {
        metrics.eventBusConsumer(true);
      }
    });
  }

  void stop() {
    stopped = true;
  }

  /** A request or probe found no consumer. */
  void gone(FrameEchoMetrics metrics) {
    if (missing.compareAndSet(false, true)) {
      metrics.eventBusConsumer(false);
      log.warn("no consumer on the event-bus address {}: requests fail and /health/ready says 503 until one appears "
        + "(asked again every {} ms)", address, PROBE_INTERVAL_MS);
      probeLater(metrics);
    }
  }

  private static boolean noConsumer(Throwable failure) {
    return failure instanceof ReplyException e && e.failureType() == ReplyFailure.NO_HANDLERS;
  }

  /** Completes with false when nobody consumes the address; a reply, a failure reply or a timeout all mean someone does. */
  private Future<Boolean> probe() {
    return vertx.eventBus().request(address, Buffer.buffer(), probe).transform(ar -> Future.succeededFuture(
      ar.succeeded() || !noConsumer(ar.cause())));
  }

  private void probeLater(FrameEchoMetrics metrics) {
    if (stopped) {
      return;
    }
    vertx.setTimer(PROBE_INTERVAL_MS, id -> probe().onSuccess(present -> {
      if (present) {
        missing.set(false);
        metrics.eventBusConsumer(true);
        log.info("the event-bus address {} has a consumer again", address);
      } else {
        probeLater(metrics);
      }
    }));
  }
}
