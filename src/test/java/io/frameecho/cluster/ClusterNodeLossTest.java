package io.frameecho.cluster;

import io.frameecho.server.EventBusFailure;
import io.frameecho.server.impl.EventBusHandler;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.HandlerOptions;
import io.frameecho.testkit.LogCapture;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.frameecho.cluster.ClusterNodes.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three clustered nodes: the event-bus handler on A, consumers on B and C. B's member is terminated (its process would
 * be gone) while it holds requests it will never answer: with timeouts longer than the test may run, only noticing
 * B's leaving can end those requests. Without re-sending they fail (cause node_left) and C's answers are given; with
 * re-sending, C answers them all.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class ClusterNodeLossTest {

  private static final int REQUESTS = 8;

  /** Failures by cause and re-sends of one handler. */
  private static class Counting implements FrameEchoMetrics {
    final Map<EventBusFailure, AtomicInteger> failed = new ConcurrentHashMap<>();
    final AtomicInteger resent = new AtomicInteger();

    @Override
    public void eventBusAnswerFailed(EventBusFailure why) {
      failed.computeIfAbsent(why, w -> new AtomicInteger()).incrementAndGet();
    }

    @Override
    public void eventBusResent() {
      resent.incrementAndGet();
    }

    int failures(EventBusFailure why) {
      AtomicInteger n = failed.get(why);
      return n == null ? 0 : n.get();
    }
  }

  @Test
  void requestsANodeThatLeftHadFailOrAreResentWithoutWaitingForTheirTimeout() throws Exception {
    String address = "loss." + UUID.randomUUID();
    // Members joining on a loaded machine warn too (a partition operation from a member not joined yet): Hazelcast's
    // lines are kept out of the build's output from the start. The captures outlive the cluster: its members go on
    // warning about the crash until they are closed.
    List<LogCapture> quiet = new ArrayList<>(List.of(LogCapture.named("com.hazelcast")));
    try {
      try (ClusterNodes cluster = new ClusterNodes()) {
        Vertx nodeA = cluster.start(false);
        Vertx nodeB = cluster.start(false);
        Vertx nodeC = cluster.start(false);
        // B takes requests and never answers (its answers die with it); C answers at once. Both answer probes.
        ConcurrentLinkedQueue<Message<Buffer>> heldByB = new ConcurrentLinkedQueue<>();
        await(nodeB.eventBus().<Buffer>consumer(address, m -> {
          if (isProbe(m)) {
            m.reply(Buffer.buffer("probe"));
          } else {
            heldByB.add(m);
          }
        }).completion());
        await(nodeC.eventBus().<Buffer>consumer(address, m -> m.reply(Buffer.buffer("answer to " + m.body()))).completion());
        await(bothReachable(nodeA, address, 100));

        HandlerOptions options = new HandlerOptions().setType(HandlerOptions.EVENT_BUS).setAddress(address)
          .setTimeoutMs(600_000).setNodeLeftGraceMs(200);
        Counting failing = new Counting();
        Counting resending = new Counting();
        EventBusHandler failHandler = new EventBusHandler(nodeA, options);
        failHandler.countHeldBytes(failing, delta -> { }, bytes -> true);
        EventBusHandler resendHandler = new EventBusHandler(nodeA, new HandlerOptions(options).setResendAfterMs(500_000));
        resendHandler.countHeldBytes(resending, delta -> { }, bytes -> true);

        List<Future<Buffer>> failAnswers = send(nodeA, failHandler, "f");
        List<Future<Buffer>> resendAnswers = send(nodeA, resendHandler, "r");
        // Vert.x round-robins between B and C: wait until B holds its share and C has answered the rest.
        List<Future<Buffer>> all = new ArrayList<>(failAnswers);
        all.addAll(resendAnswers);
        await(until(nodeA, () -> heldByB.size() + all.stream().filter(Future::isComplete).count() == 2 * REQUESTS, 600));
        long failToB = heldByB.stream().filter(m -> m.body().toString().startsWith("f")).count();
        long resendToB = heldByB.size() - failToB;
        assertTrue(failToB > 0 && resendToB > 0, "B has requests of both handlers");

        // A crash is noisy: the members warn, the manager's clean-up and B's Vert.x log errors as the cluster goes, and
        // the handler says a node left. Kept out of the build's output from here to the end.
        for (String logger : List.of("io.vertx.spi.cluster.hazelcast", "io.vertx.core.impl.VertxImpl",
          "io.frameecho.server.impl.MemberWatch")) {
          quiet.add(LogCapture.named(logger));
        }
        cluster.hazelcast(1).getLifecycleService().terminate();

        List<Boolean> failOutcomes = outcomes(failAnswers);
        List<Boolean> resendOutcomes = outcomes(resendAnswers);
        assertEquals(failToB, failing.failures(EventBusFailure.NODE_LEFT), "B's requests failed as lost with its node");
        assertEquals(REQUESTS - failToB, failOutcomes.stream().filter(ok -> ok).count(), "C's answers were given");
        assertEquals(0, failing.failures(EventBusFailure.TIMEOUT));
        assertEquals(REQUESTS, resendOutcomes.stream().filter(ok -> ok).count(), "every request answered");
        // A copy sent again before Vert.x has dropped B's consumer may go to B again, and is sent once more a grace later.
        assertTrue(resending.resent.get() >= resendToB, "B's requests sent again: " + resending.resent.get());
        assertTrue(resending.failed.isEmpty(), "no answer failed with re-sending");
        for (int i = 0; i < REQUESTS; i++) {
          assertEquals("answer to r" + i, await(resendAnswers.get(i)).toString());
        }
        failHandler.stopChecking();
        resendHandler.stopChecking();
      }
    } finally {
      quiet.forEach(LogCapture::close);
    }
  }

  @Test
  void whenTheLastConsumersNodeGoesWhileNobodySendsTheHandlerSaysTheAddressHasNone() throws Exception {
    String address = "idle.loss." + UUID.randomUUID();
    List<LogCapture> quiet = new ArrayList<>(List.of(LogCapture.named("com.hazelcast")));
    try {
      try (ClusterNodes cluster = new ClusterNodes()) {
        Vertx nodeA = cluster.start(false);
        Vertx nodeB = cluster.start(false);
        await(nodeB.eventBus().<Buffer>consumer(address, m -> m.reply(m.body())).completion());
        await(bothReachable(nodeA, address, 100));
        Promise<Void> gone = Promise.promise();
        Counting counting = new Counting() {
          @Override
          public void eventBusConsumer(boolean present) {
            if (!present) {
              gone.tryComplete();
            }
          }
        };
        EventBusHandler handler = new EventBusHandler(nodeA, new HandlerOptions().setType(HandlerOptions.EVENT_BUS)
          .setAddress(address).setTimeoutMs(5_000));
        handler.countHeldBytes(counting, delta -> { }, bytes -> true);
        assertTrue(await(handler.checkConsumer()), "B's consumer is found at start");

        for (String logger : List.of("io.vertx.spi.cluster.hazelcast", "io.vertx.core.impl.VertxImpl",
          "io.frameecho.server.impl.MemberWatch", "io.frameecho.server.impl.EventBusHandler")) {
          quiet.add(LogCapture.named(logger));
        }
        cluster.hazelcast(1).getLifecycleService().terminate();

        await(gone.future());
        assertFalse(handler.hasConsumer(), "readiness would say 503");
        assertTrue(counting.failed.isEmpty(), "no request failed to tell it");
        handler.stopChecking();
      }
    } finally {
      quiet.forEach(LogCapture::close);
    }
  }

  private static boolean isProbe(Message<Buffer> m) {
    return m.body().toString().equals("probe") || m.headers().contains(HandlerOptions.PROBE_HEADER);
  }

  /** Subscriptions reach node A a moment after they are made: ask until two in a row are answered (B's and C's). */
  private static Future<Void> bothReachable(Vertx nodeA, String address, int attemptsLeft) {
    DeliveryOptions quick = new DeliveryOptions().setSendTimeout(200);
    Future<Void> twice = nodeA.eventBus().request(address, Buffer.buffer("probe"), quick)
      .compose(r -> nodeA.eventBus().request(address, Buffer.buffer("probe"), quick)).mapEmpty();
    return twice.recover(err -> attemptsLeft <= 1 ? Future.failedFuture(err)
      : nodeA.timer(100, TimeUnit.MILLISECONDS).compose(t -> bothReachable(nodeA, address, attemptsLeft - 1)));
  }

  /** REQUESTS requests from A's event loop, as a connection sends them. */
  private static List<Future<Buffer>> send(Vertx nodeA, EventBusHandler handler, String prefix) throws Exception {
    Promise<List<Future<Buffer>>> sent = Promise.promise();
    nodeA.runOnContext(v -> {
      List<Future<Buffer>> answers = new ArrayList<>();
      for (int i = 0; i < REQUESTS; i++) {
        answers.add(handler.handle(Buffer.buffer(prefix + i)));
      }
      sent.complete(answers);
    });
    return await(sent.future());
  }

  /** Each answer's success, once all have completed. */
  private static List<Boolean> outcomes(List<Future<Buffer>> answers) throws Exception {
    List<Boolean> outcomes = new ArrayList<>();
    for (Future<Buffer> answer : answers) {
      outcomes.add(await(answer.transform(ar -> Future.succeededFuture(ar.succeeded()))));
    }
    return outcomes;
  }

  /** Completes when {@code condition} holds, looking every 50 ms, at most {@code attempts} times. */
  private static Future<Void> until(Vertx vertx, java.util.function.BooleanSupplier condition, int attempts) {
    if (condition.getAsBoolean()) {
      return Future.succeededFuture();
    }
    return attempts <= 1 ? Future.failedFuture("condition not met")
      : vertx.timer(50, TimeUnit.MILLISECONDS).compose(t -> until(vertx, condition, attempts - 1));
  }
}
