package io.frameecho.cluster;

import io.frameecho.protocol.LengthField;
import io.frameecho.server.HandlerOptions;
import io.frameecho.server.CloseReason;
import io.frameecho.server.FrameEchoVerticle;
import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.RawConnection;
import io.frameecho.testkit.RecordingMetrics;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.frameecho.cluster.ClusterNodes.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Two clustered Vert.x nodes: frame-echo on node A with the event-bus handler, the application's
 * consumers on node B.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ClusterTest {

  private static ClusterNodes cluster;
  private static Vertx nodeA;
  private static Vertx nodeB;

  @BeforeAll
  static void startCluster() throws Exception {
    cluster = new ClusterNodes();
    nodeA = cluster.start(false);
    nodeB = cluster.start(false);
  }

  @AfterAll
  static void stopCluster() {
    cluster.close();
  }

  private static String newAddress() {
    return "test.requests." + UUID.randomUUID();
  }

  /** Registers a consumer on node B and waits until node A can reach it. */
  private static void consumeOnB(String address, java.util.function.Consumer<Message<Buffer>> consumer) throws Exception {
    await(nodeB.eventBus().<Buffer>consumer(address, message -> {
      // The test's own probe (is the consumer known across the cluster?) and frame-echo's (is there a consumer?,
      // sent at start): answered at once, and not requests.
      if (message.body().toString().equals("probe") || message.headers().contains(HandlerOptions.PROBE_HEADER)) {
        message.reply(Buffer.buffer("probe"));
      } else {
        consumer.accept(message);
      }
    }).completion());
    await(probe(address, 50));
  }

  /** Subscriptions reach the other node a moment after they are made: ask until one answers. */
  private static Future<Void> probe(String address, int attemptsLeft) {
    return nodeA.eventBus().request(address, Buffer.buffer("probe"), new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(200))
      .<Void>mapEmpty()
      .recover(err -> attemptsLeft <= 1 ? Future.failedFuture(err)
        : nodeA.timer(100, TimeUnit.MILLISECONDS).compose(t -> probe(address, attemptsLeft - 1)));
  }

  private static int deployOnA(JsonObject handler) throws Exception {
    return deployOnA(handler, new FrameEchoVerticle());
  }

  /** Deploys frame-echo on node A with {@code handler}, its connections reporting to {@code metrics}. */
  private static int deployOnA(JsonObject handler, RecordingMetrics metrics) throws Exception {
    return deployOnA(handler, new FrameEchoVerticle().metrics(metrics));
  }

  private static int deployOnA(JsonObject handler, FrameEchoVerticle verticle) throws Exception {
    JsonObject config = new JsonObject().put("host", "127.0.0.1").put("port", 0).put("handler", handler);
    await(nodeA.deployVerticle(verticle, new DeploymentOptions().setConfig(config)));
    return verticle.actualPort();
  }

  private static Buffer frames(List<String> payloads) {
    Buffer all = Buffer.buffer();
    payloads.forEach(p -> all.appendBuffer(LengthField.DEFAULT.frame(Buffer.buffer(p))));
    return all;
  }

  @Test
  void pipelinedRequestsComeBackFromNodeBInOrderWhenRepliesAreOutOfOrder() throws Exception {
    String address = newAddress();
    // Request rN is answered after (9 - N) * 30 ms: the last request's reply comes first.
    consumeOnB(address, message -> {
      int n = Integer.parseInt(message.body().toString().substring(1));
      nodeB.setTimer(1 + (9 - n) * 30L, t -> message.reply(Buffer.buffer("B:" + message.body())));
    });
    int port = deployOnA(new JsonObject().put("type", "eventbus").put("address", address));
    List<String> requests = new ArrayList<>();
    List<Buffer> expected = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      requests.add("r" + i);
      expected.add(Buffer.buffer("B:r" + i));
    }
    List<Buffer> responses = await(RawConnection.open(nodeA, port).compose(c ->
      c.write(frames(requests)).compose(v -> c.expectFrames(10)).eventually(c::close)));
    assertEquals(expected, responses);
  }

  @Test
  void connectionStopsReadingAtMaxInFlight() throws Exception {
    String address = newAddress();
    AtomicInteger outstanding = new AtomicInteger();
    AtomicInteger mostOutstanding = new AtomicInteger();
    consumeOnB(address, message -> {
      mostOutstanding.accumulateAndGet(outstanding.incrementAndGet(), Math::max);
      nodeB.setTimer(20, t -> {
        outstanding.decrementAndGet();
        message.reply(message.body());
      });
    });
    int port = deployOnA(new JsonObject().put("type", "eventbus").put("address", address).put("maxInFlight", 3));
    List<String> requests = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      requests.add("m" + i);
    }
    List<Buffer> responses = await(RawConnection.open(nodeA, port).compose(c ->
      c.write(frames(requests)).compose(v -> c.expectFrames(30)).eventually(c::close)));
    assertEquals(requests, responses.stream().map(Buffer::toString).toList());
    assertEquals(3, mostOutstanding.get(), "requests awaited at once by the consumer");
  }

  @Test
  void timedOutReplyClosesOnlyThatConnectionAfterTheEarlierResponses() throws Exception {
    String address = newAddress();
    consumeOnB(address, message -> {
      if (!message.body().toString().equals("stall")) {
        message.reply(Buffer.buffer("B:" + message.body()));
      }
    });
    RecordingMetrics metrics = new RecordingMetrics();
    int port = deployOnA(new JsonObject().put("type", "eventbus").put("address", address).put("timeoutMs", 300), metrics);
    // The failed request logs a WARN line on purpose; captured, it stays off the console.
    LogCapture quiet = LogCapture.of("io.frameecho.server.impl.Connection");
    try {
      RawConnection bystander = await(RawConnection.open(nodeA, port));
      RawConnection victim = await(RawConnection.open(nodeA, port));
      await(victim.write(frames(List.of("a", "b", "stall", "c"))).compose(v -> victim.closed()));
      assertEquals(List.of(Buffer.buffer("B:a"), Buffer.buffer("B:b")), victim.received());
      await(metrics.closed(CloseReason.HANDLER_FAILED));
      assertEquals(List.of(CloseReason.HANDLER_FAILED), metrics.closeReasons(), "the timed-out reply ended that connection alone");
      await(victim.close());
      List<Buffer> fine = await(bystander.write(frames(List.of("still", "here"))).compose(v -> bystander.expectFrames(2)));
      assertEquals(List.of(Buffer.buffer("B:still"), Buffer.buffer("B:here")), fine);
      await(bystander.close());
    } finally {
      quiet.close();
    }
  }

  @Test
  void verticleDeployedUnchangedIntoAClusteredVertxPassesTheBooksScenario() throws Exception {
    FrameEchoVerticle verticle = new FrameEchoVerticle();
    await(nodeA.deployVerticle(verticle, new DeploymentOptions().setConfig(new JsonObject().put("host", "127.0.0.1").put("port", 0))));
    byte[] big = new byte[32 << 20];
    Arrays.fill(big, (byte) 'z');
    List<Buffer> requests = List.of(Buffer.buffer("hello1"), Buffer.buffer("hello2"), Buffer.buffer("hello3"),
      Buffer.buffer(big), Buffer.buffer("hello5"));
    Buffer stream = Buffer.buffer();
    requests.forEach(r -> stream.appendBuffer(LengthField.DEFAULT.frame(r)));
    List<Buffer> responses = await(RawConnection.open(nodeA, verticle.actualPort()).compose(c ->
      c.write(stream).compose(v -> c.expectFrames(5)).eventually(c::close)));
    assertEquals(requests, responses);
  }

  @Test
  void exampleConsumerUpperCases() throws Exception {
    String address = newAddress();
    await(nodeB.deployVerticle(new io.frameecho.example.UpperCaseConsumer(),
      new DeploymentOptions().setConfig(new JsonObject().put("address", address))));
    await(probe(address, 50));
    int port = deployOnA(new JsonObject().put("type", "eventbus").put("address", address));
    List<Buffer> responses = await(RawConnection.open(nodeA, port).compose(c ->
      c.write(frames(List.of("hello", "Mixed 123"))).compose(v -> c.expectFrames(2)).eventually(c::close)));
    assertEquals(List.of(Buffer.buffer("HELLO"), Buffer.buffer("MIXED 123")), responses);
  }
}
