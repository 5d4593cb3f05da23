package io.frameecho.testkit;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetClient;

import java.util.concurrent.TimeUnit;

/**
 * A loopback port nobody listens on: bound, learned, freed, and checked to refuse. Vert.x's close completes a
 * moment before the port is unbound, so the check waits for that (every 20 ms, 2 s at most).
 */
public final class RefusedPort {

  private RefusedPort() {
  }

  public static Future<Integer> of(Vertx vertx) {
    return vertx.createNetServer().connectHandler(s -> s.close()).listen(0, "127.0.0.1")
      .compose(server -> server.close().map(v -> server.actualPort()))
      .compose(port -> refused(vertx, port, 100));
  }

  private static Future<Integer> refused(Vertx vertx, int port, int triesLeft) {
    NetClient probe = vertx.createNetClient();
    return probe.connect(port, "127.0.0.1").transform(ar -> {
      probe.close();
      if (ar.failed()) {
        return Future.succeededFuture(port);
      }
      ar.result().close();
      return triesLeft == 0 ? Future.failedFuture(new AssertionError("port " + port + " still accepts"))
        : vertx.timer(20, TimeUnit.MILLISECONDS).compose(t -> refused(vertx, port, triesLeft - 1));
    });
  }
}
