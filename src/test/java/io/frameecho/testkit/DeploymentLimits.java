package io.frameecho.testkit;

import io.frameecho.server.impl.shared.ConnectionLimits;
import io.vertx.core.Vertx;

/** The limits and buffer budget the instances of one deployment share, as the server keeps them in local shared data. */
public final class DeploymentLimits {

  private DeploymentLimits() {
  }

  /** The limits of deployment {@code deploymentId}, or null while it has no server listening. */
  public static ConnectionLimits of(Vertx vertx, String deploymentId) {
    return vertx.sharedData().<String, ConnectionLimits>getLocalMap(ConnectionLimits.SHARED_MAP).get(deploymentId);
  }
}
