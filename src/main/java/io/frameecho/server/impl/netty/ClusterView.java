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
 * The cluster's members and the nodes consuming an address, read from the cluster manager's SPI through
 * {@code VertxInternal}, since Vert.x occupies the manager's only node listener. Any thread.
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

  /** The members' node ids; may block, so call on a worker. */
  public List<String> members() {
    return manager.getNodes();
  }

  /** The nodes with a consumer of {@code address}. */
  public Future<Set<String>> consumerNodes(String address) {
    Promise<List<RegistrationInfo>> registrations = Promise.promise();
    manager.getRegistrations(address, registrations);
    return registrations.future().map(list -> list.stream().map(RegistrationInfo::nodeId).collect(Collectors.toSet()));
  }
}
