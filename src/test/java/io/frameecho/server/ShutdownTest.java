package io.frameecho.server;

import io.frameecho.server.impl.connection.EchoHandler;
import ch.qos.logback.classic.Level;
import io.frameecho.protocol.LengthField;
import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.RawConnection;
import io.frameecho.testkit.RecordingMetrics;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClient;
import io.vertx.core.transport.Transport;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a stop promises: it completes only once the port refuses connections; it does not wait for idle clients;
 * a client accepted moments before it began, whose request had not arrived yet, is answered.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 30, timeUnit = TimeUnit.SECONDS)
class ShutdownTest {

  private static final int ROUNDS = 30;

  @RegisterExtension
  final LogCapture serverLog = LogCapture.of(FrameEchoServer.class);

  /** From DEBUG: "new client from ..." is the one sign that the server has accepted a connection. */
  @RegisterExtension
  final LogCapture connectionLog = LogCapture.of("io.frameecho.server.impl.Connection");

  private final RecordingMetrics metrics = new RecordingMetrics();

  /** Deploys a server on a free loopback port; completes with its deployment id and port. */
  private Future<Deployed> deploy(Vertx vertx, JsonObject config) {
    FrameEchoVerticle verticle = new FrameEchoVerticle(new EchoHandler()).metrics(metrics);
    JsonObject c = new JsonObject().put("host", "127.0.0.1").put("port", 0).mergeIn(config);
    return vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(c)).map(id -> new Deployed(id, verticle.actualPort()));
  }

  private record Deployed(String id, int port) {
  }

  /** A connect to {@code port} right now: completes with true when it was refused, false when it was accepted. */
  private static Future<Boolean> refused(Vertx vertx, int port) {
    NetClient client = vertx.createNetClient();
    return client.connect(port, "127.0.0.1").transform(ar -> {
      if (ar.succeeded()) {
        ar.result().close();
      }
      return client.close().map(v -> ar.failed());
    });
  }

  /**
   * Round after round: undeploy (a graceful shutdown), then connect at once: refused every time. With {@code served},
   * a connection is served and closed first (the server has then learned its listener and stops it accepting first).
   */
  private Future<List<Boolean>> rounds(Vertx vertx, boolean served, int left, List<Boolean> accepted) {
    if (left == 0) {
      return Future.succeededFuture(accepted);
    }
    return deploy(vertx, new JsonObject()).compose(d -> {
      Future<Void> before = !served ? Future.succeededFuture()
        : RawConnection.open(vertx, d.port()).compose(c -> c.write(LengthField.DEFAULT.frame(Buffer.buffer("x")))
          .compose(v -> c.expectFrames(1)).compose(f -> c.close()));
      return before.compose(v -> vertx.undeploy(d.id())).compose(v -> refused(vertx, d.port()))
        .compose(wasRefused -> {
          accepted.add(!wasRefused);
          return rounds(vertx, served, left - 1, accepted);
        });
    });
  }

  private void assertRefusedEveryRound(Vertx vertx, VertxTestContext ctx) {
    rounds(vertx, false, ROUNDS, new ArrayList<>())
      .compose(untouched -> rounds(vertx, true, ROUNDS, new ArrayList<>()).map(served -> {
        ctx.verify(() -> {
          assertEquals(Collections.nCopies(ROUNDS, false), untouched, "a connect right after the shutdown was accepted");
          assertEquals(Collections.nCopies(ROUNDS, false), served, "a connect right after the shutdown (after serving) was accepted");
        });
        return null;
      })).onComplete(ctx.succeedingThenComplete());
  }

  /** On NIO (the tests' Vert.x) the JDK closes a listening socket only at its selector's next select. */
  @Test
  void theShutdownCompletesOnlyOnceThePortRefuses(Vertx vertx, VertxTestContext ctx) {
    assertRefusedEveryRound(vertx, ctx);
  }

  /** On epoll (the jar's transport on Linux, where reusePort restarts happen). */
  @Test
  void theShutdownCompletesOnlyOnceThePortRefusesOnEpoll() throws Throwable {
    org.junit.jupiter.api.Assumptions.assumeTrue(Transport.EPOLL.available(), "no epoll here");
    Vertx epoll = Vertx.builder().withTransport(Transport.EPOLL).build();
    try {
      VertxTestContext ctx = new VertxTestContext();
      assertRefusedEveryRound(epoll, ctx);
      assertTrue(ctx.awaitCompletion(25, TimeUnit.SECONDS), "bounded");
      if (ctx.failed()) {
        throw ctx.causeOfFailure();
      }
    } finally {
      epoll.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  /** {@code close()} (not graceful) keeps the same promise. */
  @Test
  void closeCompletesOnlyOnceThePortRefuses(Vertx vertx, VertxTestContext ctx) {
    Future<List<Boolean>> all = Future.succeededFuture(new ArrayList<>());
    for (int i = 0; i < ROUNDS; i++) {
      all = all.compose(accepted -> {
        Promise<List<Boolean>> round = Promise.promise();
        vertx.getOrCreateContext().runOnContext(v -> {
          FrameEchoServer server = FrameEchoServer.create(vertx, new FrameEchoOptions().setHost("127.0.0.1").setPort(0));
          server.listen().compose(s -> s.close().compose(x -> refused(vertx, s.actualPort())))
            .map(wasRefused -> {
              accepted.add(!wasRefused);
              return accepted;
            }).onComplete(round);
        });
        return round.future();
      });
    }
    all.onComplete(ctx.succeeding(accepted -> ctx.verify(() -> {
      assertEquals(Collections.nCopies(ROUNDS, false), accepted, "a connect right after close() was accepted");
      ctx.completeNow();
    })));
  }

  /**
   * Idle pooled clients (answered, keeping their sockets open, never closing on a FIN) do not hold the stop: with
   * lingerTimeoutMs and shutdownTimeoutMs at a minute, the undeploy completes within this test's bound, each client has
   * its echo and then the end of the stream, and the line counts them as closed idle.
   */
  @Test
  void aStopWithOnlyIdlePooledClientsDoesNotWaitForThem(Vertx vertx, VertxTestContext ctx) {
    int clients = 5;
    List<RawConnection> pool = new ArrayList<>();
    deploy(vertx, new JsonObject().put("lingerTimeoutMs", 60_000).put("shutdownTimeoutMs", 60_000)).compose(d -> {
      Future<Void> chain = Future.succeededFuture();
      for (int i = 0; i < clients; i++) {
        String payload = "pooled-" + i;
        chain = chain.compose(v -> RawConnection.open(vertx, d.port())).compose(c -> {
          pool.add(c);
          return c.write(LengthField.DEFAULT.frame(Buffer.buffer(payload))).compose(v -> c.expectFrames(1)).mapEmpty();
        });
      }
      return chain.compose(v -> vertx.undeploy(d.id()))
        .compose(v -> Future.all(pool.stream().map(RawConnection::closed).toList()))
        .compose(v -> metrics.closes(clients))
        .compose(v -> serverLog.await(Level.INFO, "shut down"));
    }).onComplete(ctx.succeeding(line -> ctx.verify(() -> {
      assertTrue(line.endsWith(": 0 connection(s) drained, " + clients + " closed idle, 0 lost a request, 0 cut"), line);
      for (int i = 0; i < clients; i++) {
        assertEquals(List.of(Buffer.buffer("pooled-" + i)), pool.get(i).received(), "every response delivered");
      }
      assertEquals(Collections.nCopies(clients, CloseReason.SERVER_SHUTDOWN), metrics.closeReasons());
      ctx.completeNow();
    })));
  }

  /**
   * A client accepted just before the stop, whose pipelined requests arrive after it began (a client that connects
   * and sends at once, racing the stop): answered, then the end of the stream. (One not accepted yet when the listener
   * closes is the kernel's: reset on a lone listener, moved to another one of a reuseport group with tcp_migrate_req.)
   */
  @Test
  void aClientAcceptedJustBeforeTheStopIsAnswered(Vertx vertx, VertxTestContext ctx) {
    deploy(vertx, new JsonObject()).compose(d -> RawConnection.open(vertx, d.port()).compose(c ->
      connectionLog.await(Level.DEBUG, "new client from").compose(accepted -> {
        Future<Void> undeployed = vertx.undeploy(d.id());
        Buffer requests = LengthField.DEFAULT.frame(Buffer.buffer("one")).appendBuffer(LengthField.DEFAULT.frame(Buffer.buffer("two")))
          .appendBuffer(LengthField.DEFAULT.frame(Buffer.buffer("three")));
        return c.write(requests).compose(v -> c.closed()).compose(v -> undeployed).map(v -> c);
      }))).onComplete(ctx.succeeding(c -> ctx.verify(() -> {
        assertEquals(List.of(Buffer.buffer("one"), Buffer.buffer("two"), Buffer.buffer("three")), c.received());
        assertEquals(List.of(CloseReason.SERVER_SHUTDOWN), metrics.closeReasons());
        ctx.completeNow();
      })));
  }
}
