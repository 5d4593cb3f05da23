package io.frameecho.server;

import io.frameecho.testkit.RawConnection;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.ThreadingModel;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.TrafficShapingOptions;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * No option or way of deploying that would break what frame-echo promises (ordered responses, the read gate, the
 * budget, close reasons, one event loop per connection, one server per port) is accepted: each is refused at start
 * with the key or the deployment named and why.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 30, timeUnit = TimeUnit.SECONDS)
class PromisesTest {

  private static String refusal(JsonObject netServerOptions) {
    return assertThrows(IllegalArgumentException.class,
      () -> new FrameEchoOptions(new JsonObject().put("netServerOptions", netServerOptions))).getMessage();
  }

  @Test
  void optionsThatBypassThePromisesAreRefusedWithTheKeyAndWhy() {
    assertTrue(refusal(new JsonObject().put("registerWriteHandler", true))
      .startsWith("netServerOptions.registerWriteHandler: refused: it registers an event-bus consumer per socket"));
    // Without checkIntervalForStatsTimeUnit this failed the start with a stack trace after check-config passed it.
    assertTrue(refusal(new JsonObject().put("trafficShapingOptions", new JsonObject().put("inboundGlobalBandwidth", 8 << 20)))
      .startsWith("netServerOptions.trafficShapingOptions: refused: Netty's traffic shaper turns reading back on"));
    assertTrue(refusal(new JsonObject().put("idleTimeout", 5)).startsWith("netServerOptions.idleTimeout: refused: "));
    assertTrue(refusal(new JsonObject().put("readIdleTimeout", 5)).startsWith("netServerOptions.readIdleTimeout: refused: "));
    assertTrue(refusal(new JsonObject().put("writeIdleTimeout", 5)).startsWith("netServerOptions.writeIdleTimeout: refused: "));
    assertTrue(refusal(new JsonObject().put("idleTimeoutUnit", "MILLISECONDS")).startsWith("netServerOptions.idleTimeoutUnit: refused: "));
    assertTrue(refusal(new JsonObject().put("soLinger", 0)).startsWith("netServerOptions.soLinger: refused: "));
    // What keeps the promises still passes: Vert.x's defaults written out, and options that only tune the socket.
    new FrameEchoOptions(new JsonObject().put("netServerOptions", new JsonObject().put("idleTimeout", 0)
      .put("registerWriteHandler", false).put("acceptBacklog", 128).put("tcpNoDelay", true)));
  }

  /** From Java the same options reach the server without the JSON reader: listen refuses them. */
  @Test
  void theSameOptionsGivenInCodeFailTheListen(Vertx vertx, VertxTestContext ctx) {
    FrameEchoOptions options = new FrameEchoOptions().setHost("127.0.0.1").setPort(0)
      .setNetServerOptions(new NetServerOptions().setTrafficShapingOptions(new TrafficShapingOptions()
        .setInboundGlobalBandwidth(8 << 20)));
    FrameEchoServer.create(vertx, options).listen().onComplete(ctx.failing(e -> ctx.verify(() -> {
      assertTrue(e.getMessage().startsWith("invalid frame-echo configuration: netServerOptions.trafficShapingOptions: refused: "),
        e.getMessage());
      ctx.completeNow();
    })));
  }

  @Test
  void aWorkerDeploymentIsRefused(Vertx vertx, VertxTestContext ctx) {
    refusedOn(vertx, ThreadingModel.WORKER, ctx);
  }

  @Test
  void aVirtualThreadDeploymentIsRefused(Vertx vertx, VertxTestContext ctx) {
    assumeTrue(Runtime.version().feature() >= 21, "virtual threads need Java 21");
    refusedOn(vertx, ThreadingModel.VIRTUAL_THREAD, ctx);
  }

  private static void refusedOn(Vertx vertx, ThreadingModel model, VertxTestContext ctx) {
    vertx.deployVerticle(new FrameEchoVerticle(), new DeploymentOptions().setThreadingModel(model)
        .setConfig(new JsonObject().put("host", "127.0.0.1").put("port", 0)))
      .onComplete(ctx.failing(e -> ctx.verify(() -> {
        assertEquals("invalid frame-echo deployment: a frame-echo server runs its connections on an event loop, and this one "
          + "would be created on a " + model + " context; deploy it with ThreadingModel.EVENT_LOOP (DeploymentOptions' "
          + "default), or create it from an event loop", e.getMessage());
        assertEquals(0, vertx.deploymentIDs().size(), "nothing left deployed");
        ctx.completeNow();
      })));
  }

  /**
   * Two deployments on one port in one Vert.x both said "listening" and Vert.x handed connections to each in turn, each
   * with its own limits: the second is refused; the instances of one deployment still share the port.
   */
  @Test
  void aSecondDeploymentOnAServedPortIsRefused(Vertx vertx, VertxTestContext ctx) {
    io.frameecho.testkit.RefusedPort.of(vertx).compose(port -> {
      JsonObject config = new JsonObject().put("host", "127.0.0.1").put("port", port);
      java.util.function.Supplier<io.vertx.core.Deployable> verticle = FrameEchoVerticle::new;
      return vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(config).setInstances(2))
        .compose(first -> vertx.deployVerticle(new FrameEchoVerticle(), new DeploymentOptions().setConfig(config.copy()
            .put("maxConnections", 1)))
          .transform(second -> {
            ctx.verify(() -> {
              assertTrue(second.failed(), "the second deployment is refused");
              assertTrue(second.cause().getMessage().startsWith("frame-echo already serves 127.0.0.1:" + port
                + " in this Vert.x (deployment " + first + ")"), second.cause().getMessage());
            });
            return RawConnection.open(vertx, port).compose(c -> HostileClientTest.tryServe(c).eventually(c::close));
          })
          .compose(served -> {
            ctx.verify(() -> assertTrue(served, "the first deployment still serves the port"));
            return vertx.undeploy(first);
          }))
        // Once the first is gone the port is free for another deployment.
        .compose(v -> vertx.deployVerticle(new FrameEchoVerticle(), new DeploymentOptions().setConfig(config.copy())));
    }).onComplete(ctx.succeedingThenComplete());
  }

  /** Readiness without an implementation class: what /health/ready answers, for an application's own checks. */
  @Test
  void readinessIsPublic(Vertx vertx, VertxTestContext ctx) {
    FrameEchoServer.ready(vertx).compose(before -> {
      ctx.verify(() -> assertEquals(false, before, "nothing listens yet"));
      FrameEchoServer server = FrameEchoServer.create(vertx, new FrameEchoOptions().setHost("127.0.0.1").setPort(0));
      return server.listen().compose(s -> FrameEchoServer.ready(vertx)).compose(listening -> {
        ctx.verify(() -> assertEquals(true, listening, "listening with free slots"));
        return server.shutdown();
      });
    }).compose(v -> FrameEchoServer.ready(vertx))
      .onComplete(ctx.succeeding(after -> ctx.verify(() -> {
        assertEquals(false, after, "shut down");
        ctx.completeNow();
      })));
  }
}
