package io.frameecho.server.impl.netty;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.core.spi.cluster.RegistrationInfo;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The cluster as the cluster manager an application gave Vert.x sees it: its members, and the nodes with a consumer
 * of an address. Vert.x keeps its manager to itself ({@code VertxInternal#clusterManager}, the same on 5.0, 5.1 and
 * 5.2), and the manager's node listener has one slot, which Vert.x fills: reading the manager's public SPI is the way
 * left to notice a node leaving, with any manager. Any thread.
 */
public final class ClusterView {

  private final ClusterManager manager;

  private ClusterView(ClusterManager manager) {
    this.manager = manager;
  }

  /** The view of {@code vertx}'s cluster; null when it is not clustered. */
  public static ClusterView of(Vertx vertx) {
    if (!vertx.isClustered() || !(vertx instanceof VertxInternal internal) || internal.clusterManager() == null) {
      return null;
    }
    return new ClusterView(internal.clusterManager());
  }

  /** The members' node ids (the manager's call may block: ask on a worker). */
  public List<String> members() {
    return manager.getNodes();
  }

  /** The nodes with a consumer of {@code address}, as the manager has them now. */
  public Future<Set<String>> consumerNodes(String address) {
    Promise<List<RegistrationInfo>> registrations = Promise.promise();
    manager.getRegistrations(address, registrations);
    return registrations.future().map(list -> list.stream().map(RegistrationInfo::nodeId).collect(Collectors.toSet()));
  }
}
