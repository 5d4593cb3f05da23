package io.frameecho.server.impl;

import io.frameecho.server.EventBusFailure;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.HandlerOptions;
import io.frameecho.testkit.LogCapture;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageConsumer;
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
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
  @RegisterExtension
  final LogCapture memberLog = LogCapture.of(MemberWatch.class);

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
    /** Completes when the handler first says the address has no consumer. */
    final Promise<Void> consumerGone = Promise.promise();
    /** Completes when it says the address has one again after that. */
    final Promise<Void> consumerBack = Promise.promise();

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
      if (!present) {
        consumerGone.tryComplete();
      } else if (consumerGone.future().isComplete()) {
        consumerBack.tryComplete();
      }
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

  /**
   * The cluster's members as a test sets them ({@code read} completes once the first read has them); the cluster
   * manager names no node among the consumers of any address (it has dropped the departed one's at once).
   */
  private static final class Members implements MemberWatch.Cluster {
    final AtomicReference<List<String>> now = new AtomicReference<>(List.of("a", "b", "c"));
    final AtomicReference<java.util.Set<String>> consumers = new AtomicReference<>(java.util.Set.of());
    final Promise<Void> read = Promise.promise();
    final AtomicInteger reads = new AtomicInteger();
    volatile Promise<Void> readsReached;
    volatile int readsWanted;

    @Override
    public List<String> members() {
      List<String> members = now.get();
      read.tryComplete();
      if (reads.incrementAndGet() >= readsWanted && readsReached != null) {
        readsReached.tryComplete();
      }
      return members;
    }

    @Override
    public Future<java.util.Set<String>> consumerNodes(String address) {
      return Future.succeededFuture(consumers.get());
    }

    /** Completes once the watch has read the members {@code more} more times. */
    Future<Void> moreReads(int more) {
      readsReached = Promise.promise();
      readsWanted = reads.get() + more;
      return readsReached.future();
    }
  }

  /** A consumer that never answers "lost" the first time (its node went), and answers the rest at once. */
  private String consumerLosingTheFirstLost(AtomicInteger lostDeliveries) throws Exception {
    String address = "node.left." + lostDeliveries.hashCode();
    await(vertx.eventBus().<Buffer>consumer(address, message -> {
      if (!message.body().toString().equals("lost") || lostDeliveries.incrementAndGet() > 1) {
        message.reply(Buffer.buffer("answer to " + message.body()));
      }
    }).completion());
    return address;
  }

  @Test
  void withoutReSendingARequestInFlightWhenANodeLeftFailsAfterTheGraceNotAtTheTimeout() throws Exception {
    AtomicInteger lostDeliveries = new AtomicInteger();
    String address = consumerLosingTheFirstLost(lostDeliveries);
    Members members = new Members();
    // A timeout longer than the test may run: only the node's leaving can end the request.
    EventBusHandler handler = new EventBusHandler(vertx, new HandlerOptions().setType(HandlerOptions.EVENT_BUS)
      .setAddress(address).setTimeoutMs(600_000).setNodeLeftGraceMs(50), members);
    handler.countHeldBytes(metrics, delta -> { }, bytes -> true);

    Future<Buffer> lost = request(handler, "lost");
    await(members.read.future());
    members.now.set(List.of("a", "c"));

    Throwable failure = lost.transform(ar -> Future.succeededFuture(ar.cause())).toCompletionStage().toCompletableFuture()
      .get(20, TimeUnit.SECONDS);
    assertTrue(failure.getMessage().contains("a cluster node left"), failure.getMessage());
    assertEquals(1, metrics.failures(EventBusFailure.NODE_LEFT));
    assertEquals(0, metrics.failures(EventBusFailure.TIMEOUT));
    assertEquals(1, lostDeliveries.get(), "not sent again");
    assertEquals(4L, metrics.held.get(), "Vert.x may still hold the lost copy: counted until its timeout");
    assertEquals("answer to later", await(request(handler, "later")).toString(), "later requests are served");
  }

  @Test
  void withReSendingARequestInFlightWhenANodeLeftIsSentAgainAfterTheGraceNotAtResendAfterMs() throws Exception {
    AtomicInteger lostDeliveries = new AtomicInteger();
    String address = consumerLosingTheFirstLost(lostDeliveries);
    Members members = new Members();
    // Both longer than the test may run: only the node's leaving can send the request again in time.
    EventBusHandler handler = new EventBusHandler(vertx, new HandlerOptions().setType(HandlerOptions.EVENT_BUS)
      .setAddress(address).setTimeoutMs(600_000).setResendAfterMs(500_000).setNodeLeftGraceMs(50), members);
    handler.countHeldBytes(metrics, delta -> { }, bytes -> true);

    Future<Buffer> lost = request(handler, "lost");
    Future<Buffer> answered = request(handler, "answered");
    assertEquals("answer to answered", await(answered).toString());
    await(members.read.future());
    members.now.set(List.of("a", "c"));

    assertEquals("answer to lost", await(lost).toString());
    assertEquals(1, metrics.resent.get());
    assertEquals(2, lostDeliveries.get());
    assertEquals(0, metrics.failed.size(), "no answer failed");
  }

  @Test
  void aNodeJoiningOrNoNodeLeavingFailsNothing() throws Exception {
    AtomicInteger lostDeliveries = new AtomicInteger();
    String address = consumerLosingTheFirstLost(lostDeliveries);
    Members members = new Members();
    EventBusHandler handler = new EventBusHandler(vertx, new HandlerOptions().setType(HandlerOptions.EVENT_BUS)
      .setAddress(address).setTimeoutMs(300).setNodeLeftGraceMs(50), members);
    handler.countHeldBytes(metrics, delta -> { }, bytes -> true);

    Future<Buffer> lost = request(handler, "lost");
    await(members.read.future());
    members.now.set(List.of("a", "b", "c", "d"));

    assertEquals(Boolean.FALSE, await(lost.transform(ar -> Future.succeededFuture(ar.succeeded()))));
    assertEquals(1, metrics.failures(EventBusFailure.TIMEOUT), "it waited for its timeout");
    assertEquals(0, metrics.failures(EventBusFailure.NODE_LEFT));
  }

  @Test
  void aRequestSentWhileTheManagerStillNamesTheDepartedNodeWaitsUntilItDoesNot() throws Exception {
    AtomicInteger lostDeliveries = new AtomicInteger();
    String address = consumerLosingTheFirstLost(lostDeliveries);
    Members members = new Members();
    members.consumers.set(java.util.Set.of("b", "c"));
    EventBusHandler handler = new EventBusHandler(vertx, new HandlerOptions().setType(HandlerOptions.EVENT_BUS)
      .setAddress(address).setTimeoutMs(600_000).setNodeLeftGraceMs(50), members);
    handler.countHeldBytes(metrics, delta -> { }, bytes -> true);

    Future<Buffer> lost = request(handler, "lost");
    await(members.read.future());
    members.now.set(List.of("a", "c"));
    await(lost.transform(ar -> Future.succeededFuture(ar.failed())));
    assertEquals(1, metrics.failures(EventBusFailure.NODE_LEFT));

    // The manager still names b among the consumers: a request sent now waits, look after look.
    Future<Buffer> later = request(handler, "later");
    await(members.moreReads(3));
    assertFalse(later.isComplete(), "it waits while b may be picked (sent, the consumer would have answered at once)");
    members.consumers.set(java.util.Set.of("c"));
    assertEquals("answer to later", await(later).toString());
    assertEquals(0, metrics.failures(EventBusFailure.TIMEOUT));
  }

  @Test
  void whenTheLastConsumersNodeLeavesWhileNothingIsInFlightTheHandlerSaysTheAddressHasNone() throws Exception {
    String address = "idle.loss";
    MessageConsumer<Buffer> consumer = vertx.eventBus().consumer(address, message -> message.reply(message.body()));
    await(consumer.completion());
    Members members = new Members();
    EventBusHandler handler = new EventBusHandler(vertx, new HandlerOptions().setType(HandlerOptions.EVENT_BUS)
      .setAddress(address).setTimeoutMs(5_000).setNodeLeftGraceMs(50), members);
    handler.countHeldBytes(metrics, delta -> { }, bytes -> true);
    assertTrue(await(handler.checkConsumer()), "the start-up probe finds the consumer");
    await(members.read.future());

    // Its node goes, and no request is sent: only the watch can notice.
    await(consumer.unregister());
    members.now.set(List.of("a", "c"));
    await(metrics.consumerGone.future());
    assertFalse(handler.hasConsumer());
    assertTrue(metrics.failed.isEmpty(), "no request failed to tell it");

    // A consumer again: the probes that follow find it.
    await(vertx.eventBus().consumer(address, message -> message.reply(message.body())).completion());
    await(metrics.consumerBack.future());
    assertTrue(handler.hasConsumer());
    handler.stopChecking();
  }
}
