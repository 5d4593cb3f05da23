package io.frameecho.ops;

import io.frameecho.protocol.LengthField;
import io.frameecho.server.impl.EventBusHandler;
import io.frameecho.server.FrameEchoVerticle;
import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.RawConnection;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Readiness tells whether a new client would be served: not while every slot is taken and no idle connection
 * can give way, not while the event-bus address has no consumer. Waits are bounded polls of the endpoint (the
 * state it reports is the event), never sleeps.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReadinessTest {

  /** The WARN lines these tests cause on purpose (no consumer, turned away) stay out of the build's output. */
  @RegisterExtension
  final LogCapture eventBusLog = LogCapture.of(EventBusHandler.class);
  @RegisterExtension
  final LogCapture connectionLog = LogCapture.of("io.frameecho.server.impl.Connection");

  private final Vertx vertx = Vertx.vertx();
  private final List<RawConnection> opened = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (RawConnection c : opened) {
      await(c.close());
    }
    await(vertx.close());
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private FrameEchoVerticle deploy(JsonObject config) throws Exception {
    FrameEchoVerticle verticle = new FrameEchoVerticle();
    await(vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(new JsonObject().put("host", "127.0.0.1")
      .put("port", 0).put("metrics", new JsonObject().put("enabled", true).put("endpoint", true).put("host", "127.0.0.1").put("port", 0))
      .mergeIn(config))));
    return verticle;
  }

  /** Held until the answer is in: Vert.x closes a client nothing refers to any more, in the middle of a request. */
  private int ready(FrameEchoVerticle verticle) throws Exception {
    HttpClient http = vertx.createHttpClient();
    try {
      return await(http.request(HttpMethod.GET, verticle.metricsPort(), "127.0.0.1", "/health/ready")
        .compose(req -> req.send()).map(resp -> resp.statusCode()));
    } finally {
      await(http.close());
    }
  }

  /** Asks every 20 ms, at most 500 times, until readiness answers {@code status}. */
  private void awaitReady(FrameEchoVerticle verticle, int status) throws Exception {
    int last = 0;
    for (int i = 0; i < 500 && (last = ready(verticle)) != status; i++) {
      await(vertx.timer(20, TimeUnit.MILLISECONDS));
    }
    assertEquals(status, last, "/health/ready");
  }

  private RawConnection connect(FrameEchoVerticle verticle) throws Exception {
    RawConnection c = await(RawConnection.open(vertx, verticle.actualPort()));
    opened.add(c);
    // Served: the connection holds its slot.
    await(c.write(LengthField.DEFAULT.frame(Buffer.buffer("x"))).compose(v -> c.expectFrames(1)));
    return c;
  }

  @Test
  void readyAgainOnceAnotherServerHasDrainedAndStopped() throws Exception {
    FrameEchoVerticle verticle = deploy(new JsonObject());
    String other = await(vertx.deployVerticle(new FrameEchoVerticle(), new DeploymentOptions().setConfig(new JsonObject()
      .put("host", "127.0.0.1").put("port", 0))));
    assertEquals(200, ready(verticle));
    await(vertx.undeploy(other));
    assertEquals(200, ready(verticle), "the server left listening has room, and none drains");
  }

  @Test
  void notReadyWhileEverySlotIsTakenAndNobodyCanGiveWay() throws Exception {
    FrameEchoVerticle verticle = deploy(new JsonObject().put("maxConnections", 2).put("idleGiveWayMs", 0));
    connect(verticle);
    assertEquals(200, ready(verticle), "a slot is free");
    RawConnection second = connect(verticle);
    assertEquals(503, ready(verticle), "every slot taken, and idle connections never give way");
    await(second.close());
    awaitReady(verticle, 200);
  }

  @Test
  void readyWhenAnIdleConnectionCanGiveWayAndNotWhileTheyAreBusy() throws Exception {
    FrameEchoVerticle verticle = deploy(new JsonObject().put("maxConnections", 2).put("idleGiveWayMs", 100));
    RawConnection first = connect(verticle);
    RawConnection second = connect(verticle);
    // Both owe something (a frame under way): nobody can give way, whatever the time.
    await(first.write(Buffer.buffer().appendIntLE(10)));
    await(second.write(Buffer.buffer().appendIntLE(10)));
    awaitReady(verticle, 503);
    // One completes its frame and goes quiet: after idleGiveWayMs it can make room.
    await(first.write(Buffer.buffer(new byte[10])).compose(v -> first.expectFrames(2)));
    awaitReady(verticle, 200);
  }

  @Test
  void notReadyWhileTheEventBusAddressHasNoConsumer() throws Exception {
    String address = "readiness.requests";
    FrameEchoVerticle verticle = deploy(new JsonObject().put("handler", new JsonObject().put("type", "eventbus")
      .put("address", address).put("timeoutMs", 2000)));
    awaitReady(verticle, 503);
    assertEquals(1, eventBusLog.count(ch.qos.logback.classic.Level.WARN), "one WARN line at start");

    MessageConsumer<Buffer> consumer = vertx.eventBus().consumer(address, m -> m.reply(m.body()));
    await(consumer.completion());
    awaitReady(verticle, 200);
    RawConnection client = connect(verticle);

    // The consumer goes away while running: the next request finds nobody.
    await(consumer.unregister());
    await(client.write(LengthField.DEFAULT.frame(Buffer.buffer("y"))).compose(v -> client.closed()));
    awaitReady(verticle, 503);
  }
}
