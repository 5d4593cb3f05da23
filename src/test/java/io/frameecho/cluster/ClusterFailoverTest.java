package io.frameecho.cluster;

import io.frameecho.protocol.LengthField;
import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.RawConnection;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.TimeUnit;

import static io.frameecho.cluster.ClusterNodes.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** HA: node A dies abruptly; node B redeploys frame-echo with the same config and new clients are served. */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class ClusterFailoverTest {

  @Test
  void verticleFailsOverToTheSurvivingNode() throws Exception {
    int port;
    try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = probe.getLocalPort();
    }
    Vertx client = Vertx.vertx();
    LogCapture hazelcastWarnings = null;
    LogCapture vertxErrors = null;
    try (ClusterNodes cluster = new ClusterNodes()) {
      Vertx nodeA = cluster.start(true);
      Vertx nodeB = cluster.start(true);
      JsonObject config = new JsonObject().put("host", "127.0.0.1").put("port", port);
      await(nodeA.deployVerticle("io.frameecho.server.FrameEchoVerticle", new DeploymentOptions().setHa(true).setConfig(config)));
      assertEquals(1, nodeA.deploymentIDs().size());
      assertEquals(0, nodeB.deploymentIDs().size());
      assertEquals("before", await(roundTrip(client, port, "before")));

      // Wait until the HA information is backed up on node B, then kill node A's cluster member.
      assertTrue(cluster.hazelcast(0).getPartitionService().forceLocalMemberToBeSafe(30, TimeUnit.SECONDS), "cluster safe");
      // A crash is expected to be noisy: the members warn that one is gone, and node A's Vert.x logs an
      // ERROR with a stack trace when it cannot leave a cluster whose member is dead. Keep those lines
      // out of the build's output from here to the end of the test.
      hazelcastWarnings = LogCapture.named("com.hazelcast");
      vertxErrors = LogCapture.named("io.vertx.core.impl.VertxImpl");
      cluster.hazelcast(0).getLifecycleService().terminate();
      // Node A's process would be gone: its server goes too.
      nodeA.close().toCompletionStage().toCompletableFuture().handle((v, e) -> null).get(30, TimeUnit.SECONDS);

      assertEquals("after", await(retryRoundTrip(client, port, "after", 300)));
      assertEquals(1, nodeB.deploymentIDs().size(), "the verticle now runs on node B");
    } finally {
      client.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      if (hazelcastWarnings != null) {
        hazelcastWarnings.close();
        vertxErrors.close();
      }
    }
  }

  private static Future<String> roundTrip(Vertx vertx, int port, String text) {
    return RawConnection.open(vertx, port).compose(c -> c.write(LengthField.DEFAULT.frame(Buffer.buffer(text)))
      .compose(v -> c.expectFrames(1))
      .map(r -> r.get(0).toString())
      .eventually(c::close));
  }

  /** Clients reconnect: try every 200 ms until the redeployed server answers. */
  private static Future<String> retryRoundTrip(Vertx vertx, int port, String text, int attemptsLeft) {
    return roundTrip(vertx, port, text).recover(err -> attemptsLeft <= 1 ? Future.failedFuture(err)
      : vertx.timer(200, TimeUnit.MILLISECONDS).compose(t -> retryRoundTrip(vertx, port, text, attemptsLeft - 1)));
  }
}
