package io.frameecho.server;

import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.RawConnection;
import io.frameecho.testkit.RecordingMetrics;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What an application embedding frame-echo can rely on: the instances of one deployment are one server
 * (they share their limits), while two servers in one Vert.x keep their own.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 30, timeUnit = TimeUnit.SECONDS)
class EmbeddingTest {

  /** The connections turned away on purpose log a WARN line; captured, it stays off the console. */
  @RegisterExtension
  final LogCapture limitsLog = LogCapture.of("io.frameecho.server.impl.ConnectionLimits");

  /** Deploys {@code instances} instances, every one reporting to {@code metrics}; completes with their port. */
  private static Future<Integer> deploy(Vertx vertx, JsonObject config, int instances, RecordingMetrics metrics) {
    JsonObject c = new JsonObject().put("host", "127.0.0.1").put("port", 0).mergeIn(config);
    FrameEchoVerticle[] first = new FrameEchoVerticle[1];
    return vertx.deployVerticle(() -> {
        FrameEchoVerticle verticle = new FrameEchoVerticle().metrics(metrics);
        if (first[0] == null) {
          first[0] = verticle;
        }
        return verticle;
      }, new DeploymentOptions().setConfig(c).setInstances(instances))
      .map(id -> first[0].actualPort());
  }

  /**
   * Opens {@code n} connections one after another, keeping each open, and says which were answered; each is
   * tried before the next opens, so the order of accepts is the order of opening.
   */
  private static Future<List<Boolean>> openAndServe(Vertx vertx, int port, int n, List<RawConnection> opened) {
    List<Boolean> served = new ArrayList<>();
    Future<Void> chain = Future.succeededFuture();
    for (int i = 0; i < n; i++) {
      chain = chain.compose(v -> RawConnection.open(vertx, port)).compose(c -> {
        opened.add(c);
        return HostileClientTest.tryServe(c).map(ok -> {
          served.add(ok);
          return null;
        });
      });
    }
    return chain.map(v -> served);
  }

  @Test
  void twoServersInOneVertxKeepTheirOwnLimits(Vertx vertx, VertxTestContext ctx) {
    List<RawConnection> opened = new ArrayList<>();
    RecordingMetrics strictMetrics = new RecordingMetrics();
    RecordingMetrics roomyMetrics = new RecordingMetrics();
    deploy(vertx, new JsonObject().put("maxConnections", 1).put("idleGiveWayMs", 0), 1, strictMetrics).compose(strict ->
        deploy(vertx, new JsonObject().put("maxConnections", 3).put("idleGiveWayMs", 0), 1, roomyMetrics).compose(roomy ->
          openAndServe(vertx, strict, 2, opened).compose(strictServed ->
            openAndServe(vertx, roomy, 3, opened).map(roomyServed -> {
              ctx.verify(() -> {
                assertEquals(List.of(true, false), strictServed, "the first server's maxConnections is 1");
                assertEquals(List.of(true, true, true), roomyServed, "the second server's maxConnections is 3, not the first's");
                // The refused connection was turned away by the first server's limit, and reported by it alone.
                assertEquals(1, strictMetrics.rejectedFor(Rejection.MAX_CONNECTIONS));
                assertEquals(0, roomyMetrics.rejectedFor(Rejection.MAX_CONNECTIONS));
              });
              return null;
            }))))
      .eventually(() -> Future.all(opened.stream().map(RawConnection::close).toList()))
      .onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void theInstancesOfOneDeploymentShareTheirLimits(Vertx vertx, VertxTestContext ctx) {
    List<RawConnection> opened = new ArrayList<>();
    RecordingMetrics metrics = new RecordingMetrics();
    // A negative port: one random port shared by both instances.
    deploy(vertx, new JsonObject().put("port", -1).put("maxConnections", 2).put("idleGiveWayMs", 0), 2, metrics).compose(port ->
        openAndServe(vertx, port, 3, opened).map(served -> {
          ctx.verify(() -> {
            assertEquals(List.of(true, true, false), served, "two instances, one maxConnections of 2 between them");
            assertEquals(1, metrics.rejectedFor(Rejection.MAX_CONNECTIONS), "turned away for maxConnections");
          });
          return null;
        }))
      .eventually(() -> Future.all(opened.stream().map(RawConnection::close).toList()))
      .onComplete(ctx.succeedingThenComplete());
  }
}
