package example;

import com.hazelcast.config.Config;
import com.hazelcast.config.XmlConfigBuilder;
import io.frameecho.server.CloseReason;
import io.frameecho.server.EventBusFailure;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.FrameEchoVerticle;
import io.frameecho.server.HandlerOptions;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * An application clustered with its own cluster manager (Hazelcast, this line's {@code vertx-hazelcast}), two nodes on
 * loopback: frame-echo's event-bus handler on A, the address's only consumer on B, which takes a request and never
 * answers. B's member is terminated (its process would be gone): the client's request fails as lost with its node
 * ({@code node_left}, the connection closing as a failed answer closes it), not at {@code handler.timeoutMs}, which is
 * longer than this test may wait. That is frame-echo reaching the cluster manager Vert.x was given, on this line.
 * <p>
 * Runs in a surefire execution of its own: the other tests check that no cluster manager came with the library.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NodeLossEmbedderTest {

  private static final int WAIT_S = 20;
  /** Longer than every wait of this test: a request that ends ended for another reason than its timeout. */
  private static final long TIMEOUT_MS = 120_000;

  /** What the application's metrics system is told: the first failed answer's cause and the connection's end. */
  private static final class Failures implements FrameEchoMetrics {
    final CompletableFuture<EventBusFailure> failed = new CompletableFuture<>();
    final CompletableFuture<CloseReason> closed = new CompletableFuture<>();

    @Override
    public void eventBusAnswerFailed(EventBusFailure why) {
      failed.complete(why);
    }

    @Override
    public void connectionClosed(CloseReason reason) {
      closed.complete(reason);
    }
  }

  @Test
  void aRequestHeldByANodeThatLeftFailsWithoutWaitingForItsTimeout() throws Exception {
    String clusterName = "frame-echo-embedder-" + UUID.randomUUID();
    String address = "node-loss." + UUID.randomUUID();
    List<Vertx> nodes = new ArrayList<>();
    try {
      HazelcastClusterManager managerA = new HazelcastClusterManager(hazelcastConfig(clusterName));
      HazelcastClusterManager managerB = new HazelcastClusterManager(hazelcastConfig(clusterName));
      Vertx nodeA = clustered(managerA, nodes);
      Vertx nodeB = clustered(managerB, nodes);

      // B answers probes (the test's and the handler's) and holds every request.
      CompletableFuture<Message<Buffer>> heldByB = new CompletableFuture<>();
      await(nodeB.eventBus().<Buffer>consumer(address, m -> {
        if (m.headers().contains(HandlerOptions.PROBE_HEADER)) {
          m.reply(Buffer.buffer());
        } else {
          heldByB.complete(m);
        }
      }).completion());
      await(reachable(nodeA, address, 100));

      Failures failures = new Failures();
      FrameEchoVerticle verticle = new FrameEchoVerticle(new FrameEchoOptions().setHost("127.0.0.1").setPort(0)
        .setHandler(new HandlerOptions().setType(HandlerOptions.EVENT_BUS).setAddress(address)
          .setTimeoutMs(TIMEOUT_MS).setNodeLeftGraceMs(200))).metrics(failures);
      await(nodeA.deployVerticle(verticle, new DeploymentOptions()));

      try (Socket socket = new Socket("127.0.0.1", verticle.actualPort())) {
        socket.setSoTimeout(WAIT_S * 1000);
        OutputStream out = socket.getOutputStream();
        out.write(ByteBuffer.allocate(9).order(ByteOrder.LITTLE_ENDIAN).putInt(5).put("hello".getBytes()).array());
        out.flush();
        heldByB.get(WAIT_S, TimeUnit.SECONDS);

        managerB.getHazelcastInstance().getLifecycleService().terminate();

        assertEquals(EventBusFailure.NODE_LEFT, failures.failed.get(WAIT_S, TimeUnit.SECONDS),
          "the request failed as lost with its node");
        assertEquals(CloseReason.HANDLER_FAILED, failures.closed.get(WAIT_S, TimeUnit.SECONDS));
        InputStream in = socket.getInputStream();
        assertEquals(-1, in.read(), "the connection closed with no response");
      }
    } finally {
      for (Vertx node : nodes) {
        try {
          node.close().toCompletionStage().toCompletableFuture().get(WAIT_S, TimeUnit.SECONDS);
        } catch (Exception ignored) {
          // B, whose member was terminated, may not leave cleanly: it is gone either way
        }
      }
    }
  }

  /**
   * The configuration frame-echo ships (conf/cluster.xml: members on loopback, joined over TCP/IP, nothing else),
   * with a cluster of this test's own and a failure detector quick enough for a test.
   */
  private static Config hazelcastConfig(String clusterName) throws Exception {
    Config config = new XmlConfigBuilder(System.getProperty("frameecho.cluster.xml")).build();
    config.setClusterName(clusterName);
    config.setProperty("hazelcast.heartbeat.interval.seconds", "1");
    config.setProperty("hazelcast.max.no.heartbeat.seconds", "3");
    config.setProperty("hazelcast.wait.seconds.before.join", "0");
    return config;
  }

  private static Vertx clustered(HazelcastClusterManager manager, List<Vertx> nodes) throws Exception {
    Vertx vertx = await(Vertx.builder()
      .with(new VertxOptions().setEventBusOptions(new EventBusOptions().setHost("127.0.0.1")))
      .withClusterManager(manager).buildClustered());
    nodes.add(vertx);
    return vertx;
  }

  /** A subscription reaches node A a moment after it is made: probe until one is answered. */
  private static Future<Void> reachable(Vertx nodeA, String address, int attemptsLeft) {
    DeliveryOptions probe = new DeliveryOptions().setSendTimeout(200).addHeader(HandlerOptions.PROBE_HEADER, "test");
    return nodeA.eventBus().request(address, Buffer.buffer(), probe).<Void>mapEmpty()
      .recover(err -> attemptsLeft <= 1 ? Future.failedFuture(err)
        : nodeA.timer(100, TimeUnit.MILLISECONDS).compose(t -> reachable(nodeA, address, attemptsLeft - 1)));
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }
}
