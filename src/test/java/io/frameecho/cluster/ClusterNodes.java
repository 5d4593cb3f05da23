package io.frameecho.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.config.XmlConfigBuilder;
import com.hazelcast.core.HazelcastInstance;
import io.frameecho.testkit.LogCapture;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/** Clustered Vert.x nodes in this JVM, on loopback, in a cluster of their own; close() stops them all. */
final class ClusterNodes implements AutoCloseable {

  private final String clusterName = "frame-echo-test-" + UUID.randomUUID();
  private final List<Vertx> nodes = new ArrayList<>();
  private final List<HazelcastClusterManager> managers = new ArrayList<>();
  /**
   * On a busy machine a stalled JVM looks to Hazelcast's heartbeat like a jump of the system clock, and it warns
   * ("Resetting heartbeat timestamps because of huge system clock jump"): expected, and not what these tests test.
   */
  private final LogCapture clockJumps = LogCapture.named("com.hazelcast.internal.cluster.impl.ClusterHeartbeatManager");

  /** The shipped conf/cluster.xml, with this test's own cluster name and a quicker failure detector. */
  private Config hazelcastConfig() throws IOException {
    Config config = new XmlConfigBuilder("conf/cluster.xml").build();
    config.setClusterName(clusterName);
    config.setProperty("hazelcast.max.no.heartbeat.seconds", "5");
    config.setProperty("hazelcast.wait.seconds.before.join", "0");
    return config;
  }

  Vertx start(boolean haEnabled) throws Exception {
    HazelcastClusterManager manager = new HazelcastClusterManager(hazelcastConfig());
    VertxOptions options = new VertxOptions().setHAEnabled(haEnabled)
      .setEventBusOptions(new EventBusOptions().setHost("127.0.0.1"));
    Vertx vertx = Vertx.builder().with(options).withClusterManager(manager).buildClustered()
      .toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    nodes.add(vertx);
    managers.add(manager);
    return vertx;
  }

  HazelcastInstance hazelcast(int node) {
    return managers.get(node).getHazelcastInstance();
  }

  static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  @Override
  public void close() {
    // As members leave one after another, the ones still up warn that a connection dropped and a member
    // is suspected dead: expected while the test cluster is torn down, so kept out of the build's output.
    LogCapture teardown = LogCapture.named("com.hazelcast");
    try {
      for (Vertx vertx : nodes) {
        try {
          vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (Exception ignored) {
          // a node whose cluster member was terminated may fail to leave cleanly; it is gone either way
        }
      }
    } finally {
      teardown.close();
      clockJumps.close();
    }
  }
}
