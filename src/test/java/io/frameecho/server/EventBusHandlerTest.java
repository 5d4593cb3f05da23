package io.frameecho.server;

import io.frameecho.testkit.LogCapture;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.ReplyException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The event-bus handler on one Vert.x: re-sending for idempotent applications, failures counted by cause, and the
 * bytes it counts for copies Vert.x may still hold. Each wait is for an event (an answer, a meter's change), bounded.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class EventBusHandlerTest {

  @RegisterExtension
  final LogCapture eventBusLog = LogCapture.of(EventBusHandler.class);

  private final Vertx vertx = Vertx.vertx();
  private final Counting metrics = new Counting();

  @AfterEach
  void close() throws Exception {
    await(vertx.close());
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }

  /** What the handler reports; held bytes as they change. */
  private static final class Counting implements FrameEchoMetrics {
    final Map<EventBusFailure, AtomicInteger> failed = new EnumMap<>(EventBusFailure.class);
    final AtomicInteger resent = new AtomicInteger();
    final AtomicLong held = new AtomicLong();
    final List<Long> heldSeen = new ArrayList<>();
    /** Completes the second time the held bytes return to 0. */
    final Promise<Void> zeroTwice = Promise.promise();
    int zeros;
    volatile Boolean consumer;

    @Override
    public void eventBusAnswerFailed(EventBusFailure why) {
      failed.computeIfAbsent(why, w -> new AtomicInteger()).incrementAndGet();
    }

    @Override
    public void eventBusResent() {
      resent.incrementAndGet();
    }

    @Override
    public synchronized void eventBusHeld(long delta) {
      long now = held.addAndGet(delta);
      heldSeen.add(now);
      if (now == 0 && ++zeros == 2) {
        zeroTwice.complete();
      }
    }

    @Override
    public void eventBusConsumer(boolean present) {
      consumer = present;
    }

    int failures(EventBusFailure why) {
      AtomicInteger n = failed.get(why);
      return n == null ? 0 : n.get();
    }
  }

  private EventBusHandler handler(HandlerOptions options) {
    return handler(options, true);
  }

  /** A handler whose budget has room for a re-send, or never. */
  private EventBusHandler handler(HandlerOptions options, boolean room) {
    EventBusHandler handler = new EventBusHandler(vertx, options.setType(HandlerOptions.EVENT_BUS));
    AtomicLong budget = new AtomicLong();
    handler.countHeldBytes(metrics, budget::addAndGet, bytes -> room);
    return handler;
  }

  /** Runs the handler on an event loop, as a connection does. */
  private Future<Buffer> request(EventBusHandler handler, String payload) {
    Promise<Buffer> answer = Promise.promise();
    vertx.runOnContext(v -> handler.handle(Buffer.buffer(payload)).onComplete(answer));
    return answer.future();
  }

  @Test
  void aRequestTheFirstConsumerLostIsResentAndAnsweredAndItsLostCopyStaysCountedUntilItTimesOut() throws Exception {
    String address = "resend.answered";
    AtomicInteger deliveries = new AtomicInteger();
    // The first delivery is lost (a consumer on a node that went), the second answered.
    await(vertx.eventBus().<Buffer>consumer(address, message -> {
      if (deliveries.incrementAndGet() > 1) {
        message.reply(Buffer.buffer("answer to " + message.body()));
      }
    }).completion());
    EventBusHandler handler = handler(new HandlerOptions().setAddress(address).setTimeoutMs(2000).setResendAfterMs(100));

    assertEquals("answer to hello", await(request(handler, "hello")).toString());
    assertEquals(1, metrics.resent.get());
    assertEquals(2, deliveries.get());
    await(metrics.zeroTwice.future());
    assertEquals(List.of(5L, 0L, 5L, 0L), metrics.heldSeen, "the re-sent copy while awaited, then the lost one from the "
      + "answer until it timed out (not clustered: no hold after the timeout)");
    assertEquals(0, metrics.failed.size(), "no answer failed");
  }

  @Test
  void withoutReSendingALostRequestFailsAtTheTimeoutCountedAsOne() throws Exception {
    String address = "no.resend";
    await(vertx.eventBus().<Buffer>consumer(address, message -> { }).completion());
    EventBusHandler handler = handler(new HandlerOptions().setAddress(address).setTimeoutMs(100));

    Throwable failure = request(handler, "hello").transform(ar -> Future.succeededFuture(ar.cause()))
      .toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    assertInstanceOf(ReplyException.class, failure);
    assertEquals(1, metrics.failures(EventBusFailure.TIMEOUT));
    assertEquals(0, metrics.resent.get());
    assertTrue(metrics.heldSeen.isEmpty(), "not clustered: Vert.x holds nothing of ours after a timeout");
  }

  @Test
  void failuresAreCountedByCauseAndAConsumersOwnFailureIsNotResent() throws Exception {
    String address = "fails";
    AtomicInteger deliveries = new AtomicInteger();
    await(vertx.eventBus().<Buffer>consumer(address, message -> {
      deliveries.incrementAndGet();
      if (message.body().toString().equals("object")) {
        message.reply("a string");
      } else {
        message.fail(42, "no");
      }
    }).completion());
    EventBusHandler handler = handler(new HandlerOptions().setAddress(address).setTimeoutMs(5000).setResendAfterMs(1000));

    assertEquals(Boolean.TRUE, await(request(handler, "fail").transform(ar -> Future.succeededFuture(ar.failed()))));
    assertEquals(1, metrics.failures(EventBusFailure.CONSUMER_FAILED));
    assertEquals(1, deliveries.get(), "a failure reply is the consumer's answer: not sent again");
    await(request(handler, "object").transform(ar -> Future.succeededFuture(ar.failed())));
    assertEquals(1, metrics.failures(EventBusFailure.NOT_A_BUFFER));

    EventBusHandler nobody = handler(new HandlerOptions().setAddress("nobody").setTimeoutMs(5000));
    await(request(nobody, "x").transform(ar -> Future.succeededFuture(ar.failed())));
    assertEquals(1, metrics.failures(EventBusFailure.NO_CONSUMER));
    assertEquals(false, metrics.consumer);
    nobody.stopChecking();
  }

  @Test
  void aReSendThatDoesNotFitTheBudgetIsNotSentAndTheRequestTimesOut() throws Exception {
    String address = "no.room";
    AtomicInteger deliveries = new AtomicInteger();
    await(vertx.eventBus().<Buffer>consumer(address, message -> deliveries.incrementAndGet()).completion());
    EventBusHandler handler = handler(new HandlerOptions().setAddress(address).setTimeoutMs(500).setResendAfterMs(100), false);

    Throwable failure = request(handler, "hello").transform(ar -> Future.succeededFuture(ar.cause()))
      .toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    assertInstanceOf(ReplyException.class, failure);
    assertEquals(1, metrics.failures(EventBusFailure.TIMEOUT));
    assertEquals(0, metrics.resent.get());
    assertEquals(1, deliveries.get(), "only the first copy went");
  }
}
