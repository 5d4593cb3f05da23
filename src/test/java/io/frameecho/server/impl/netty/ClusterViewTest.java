package io.frameecho.server.impl.netty;

import io.vertx.core.Completable;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.core.shareddata.Counter;
import io.vertx.core.shareddata.Lock;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.core.spi.cluster.NodeInfo;
import io.vertx.core.spi.cluster.NodeListener;
import io.vertx.core.spi.cluster.RegistrationInfo;
import io.vertx.core.spi.cluster.RegistrationListener;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The cluster as the application's cluster manager has it, read through Vert.x's own reference to it: its members,
 * and the nodes with a consumer of an address; none for a Vert.x that is not clustered; off, said why, on a line
 * without the reference.
 */
class ClusterViewTest {

  private static final String SELF = "node-self";
  private static final String OTHER = "node-other";

  @Test
  void aVertxThatIsNotClusteredHasNoView() throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      assertNull(ClusterView.of(vertx));
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void theViewReadsTheManagerVertxWasGivenMembersAndConsumersAlike() throws Exception {
    OneNodeCluster manager = new OneNodeCluster();
    Vertx vertx = Vertx.builder()
      .with(new VertxOptions().setEventBusOptions(new EventBusOptions().setHost("127.0.0.1").setPort(0)))
      .withClusterManager(manager).buildClustered().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    try {
      ClusterView view = ClusterView.of(vertx);
      assertNotNull(view);
      assertEquals(List.of(SELF, OTHER), view.members());
      manager.members.remove(OTHER);
      assertEquals(List.of(SELF), view.members(), "read anew at each call: a node that left is seen gone");

      MessageConsumer<Object> consumer = vertx.eventBus().consumer("frame-echo.test", message -> {
      });
      consumer.completion().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      assertEquals(Set.of(SELF), nodes(view, "frame-echo.test"), "this node's consumer, registered through Vert.x");
      manager.addRegistration("frame-echo.test", new RegistrationInfo(OTHER, 1, false), (v, e) -> {
      });
      manager.addRegistration("frame-echo.test", new RegistrationInfo(OTHER, 2, false), (v, e) -> {
      });
      assertEquals(Set.of(SELF, OTHER), nodes(view, "frame-echo.test"), "each node once, however many consumers it has");
      assertEquals(Set.of(), nodes(view, "frame-echo.nobody"));
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void aFailedReadOfTheConsumersFailsTheAnswer() throws Exception {
    OneNodeCluster manager = new OneNodeCluster();
    manager.registrationsFail = true;
    Vertx vertx = Vertx.builder()
      .with(new VertxOptions().setEventBusOptions(new EventBusOptions().setHost("127.0.0.1").setPort(0)))
      .withClusterManager(manager).buildClustered().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    try {
      Throwable failure = ClusterView.of(vertx).consumerNodes("frame-echo.test").toCompletionStage().toCompletableFuture()
        .handle((nodes, e) -> e).get(10, TimeUnit.SECONDS);
      assertEquals("the manager cannot read its registrations", failure.getMessage());
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }


  private static Set<String> nodes(ClusterView view, String address) throws Exception {
    return view.consumerNodes(address).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** A cluster manager of one process: its own node and, on paper, one other; registrations kept in a map. */
  private static final class OneNodeCluster implements ClusterManager {

    final List<String> members = new CopyOnWriteArrayList<>(List.of(SELF, OTHER));
    final Map<String, List<RegistrationInfo>> registrations = new ConcurrentHashMap<>();
    volatile boolean registrationsFail;
    private volatile NodeInfo nodeInfo;

    @Override
    public void init(Vertx vertx) {
    }

    @Override
    public <K, V> void getAsyncMap(String name, Completable<AsyncMap<K, V>> promise) {
      promise.fail("no maps in this cluster");
    }

    @Override
    public <K, V> Map<K, V> getSyncMap(String name) {
      return new ConcurrentHashMap<>();
    }

    @Override
    public void getLockWithTimeout(String name, long timeout, Completable<Lock> promise) {
      promise.fail("no locks in this cluster");
    }

    @Override
    public void getCounter(String name, Completable<Counter> promise) {
      promise.fail("no counters in this cluster");
    }

    @Override
    public String getNodeId() {
      return SELF;
    }

    @Override
    public List<String> getNodes() {
      return new ArrayList<>(members);
    }

    @Override
    public void nodeListener(NodeListener listener) {
    }

    @Override
    public void setNodeInfo(NodeInfo nodeInfo, Completable<Void> promise) {
      this.nodeInfo = nodeInfo;
      promise.succeed();
    }

    @Override
    public NodeInfo getNodeInfo() {
      return nodeInfo;
    }

    @Override
    public void getNodeInfo(String nodeId, Completable<NodeInfo> promise) {
      promise.succeed(SELF.equals(nodeId) ? nodeInfo : null);
    }

    @Override
    public void join(Completable<Void> promise) {
      promise.succeed();
    }

    @Override
    public void leave(Completable<Void> promise) {
      promise.succeed();
    }

    @Override
    public boolean isActive() {
      return true;
    }

    @Override
    public void registrationListener(RegistrationListener registrationListener) {
    }

    @Override
    public void addRegistration(String address, RegistrationInfo registrationInfo, Completable<Void> promise) {
      registrations.computeIfAbsent(address, a -> new CopyOnWriteArrayList<>()).add(registrationInfo);
      promise.succeed();
    }

    @Override
    public void removeRegistration(String address, RegistrationInfo registrationInfo, Completable<Void> promise) {
      registrations.getOrDefault(address, new ArrayList<>()).remove(registrationInfo);
      promise.succeed();
    }

    @Override
    public void getRegistrations(String address, Completable<List<RegistrationInfo>> promise) {
      if (registrationsFail) {
        promise.fail("the manager cannot read its registrations");
        return;
      }
      promise.succeed(List.copyOf(registrations.getOrDefault(address, List.of())));
    }
  }
}
