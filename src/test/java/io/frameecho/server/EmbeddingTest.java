package io.frameecho.server;

import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.RawConnection;
import io.frameecho.testkit.RecordingMetrics;
import io.frameecho.testkit.RefusedPort;
import io.frameecho.client.FrameClient;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.net.NetClient;
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
 * (they share their limits), while two servers in one Vert.x keep their own; metrics on open no HTTP port of
 * ours unless the application asks for one.
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

  /**
   * Typed options and several instances, as EMBEDDING.md shows it (a supplier: Vert.x refuses one verticle object
   * deployed twice): on port 0 the instances listen on one random port, all serve it, and undeploying says the
   * deployment's shutdown in one line that counts every instance's connections.
   */
  @Test
  void threeInstancesOnPortZeroListenOnOnePortAndSayOneShutdownLine(Vertx vertx, VertxTestContext ctx) {
    List<RawConnection> opened = new ArrayList<>();
    List<FrameEchoVerticle> instances = new ArrayList<>();
    FrameEchoOptions options = new FrameEchoOptions().setHost("127.0.0.1").setPort(0).setDrainDelayMs(0);
    LogCapture shutdownLog = LogCapture.of(io.frameecho.server.impl.FrameEchoServerImpl.LOGGER);
    vertx.deployVerticle(() -> {
        FrameEchoVerticle verticle = new FrameEchoVerticle(options);
        synchronized (instances) {
          instances.add(verticle);
        }
        return verticle;
      }, new DeploymentOptions().setInstances(3))
      .compose(id -> {
        int port = instances.get(0).actualPort();
        ctx.verify(() -> {
          assertEquals(port, instances.get(1).actualPort(), "one port for the deployment");
          assertEquals(port, instances.get(2).actualPort(), "one port for the deployment");
        });
        return openAndServe(vertx, port, 6, opened).compose(served -> {
          ctx.verify(() -> assertEquals(List.of(true, true, true, true, true, true), served));
          return vertx.undeploy(id);
        });
      })
      .compose(v -> shutdownLog.awaitCount(ch.qos.logback.classic.Level.INFO, " shut down", 1))
      .onComplete(ctx.succeeding(v -> ctx.verify(() -> {
        assertEquals(1, shutdownLog.count(ch.qos.logback.classic.Level.INFO, " shut down"), "one shutdown line");
        assertEquals(1, shutdownLog.count(ch.qos.logback.classic.Level.INFO, "0 connection(s) drained, 6 closed idle"),
          "every instance's connections in it");
        shutdownLog.close();
        Future.all(opened.stream().map(RawConnection::close).toList()).onComplete(ctx.succeedingThenComplete());
      })));
  }

  /** Completes with whether something accepts a connection on the loopback {@code port}. */
  private static Future<Boolean> accepts(Vertx vertx, int port) {
    NetClient probe = vertx.createNetClient();
    return probe.connect(port, "127.0.0.1")
      .compose(socket -> socket.close().map(true), refused -> Future.succeededFuture(false))
      .eventually(probe::close);
  }

  /**
   * Metrics on and nothing said about the endpoint: no HTTP port of ours, whether the options come in code, in the
   * deployment's config or to the facade; the meters are there all the same. Asked for ({@code setEndpoint(true)}),
   * the endpoint opens on that very port, so the probe would have found one had there been one.
   */
  @Test
  void metricsOnOpenNoHttpPortUnlessTheApplicationAsks(Vertx vertx, VertxTestContext ctx) {
    List<FrameEchoServer> facades = new ArrayList<>();
    RefusedPort.of(vertx).compose(metricsPort -> {
      MetricsOptions metrics = new MetricsOptions().setEnabled(true).setHost("127.0.0.1").setPort(metricsPort);
      FrameEchoOptions options = new FrameEchoOptions().setHost("127.0.0.1").setPort(0).setMetrics(metrics);
      JsonObject config = new JsonObject().put("host", "127.0.0.1").put("port", 0)
        .put("metrics", new JsonObject().put("enabled", true).put("host", "127.0.0.1").put("port", metricsPort));
      FrameEchoVerticle typed = new FrameEchoVerticle(options);
      FrameEchoVerticle configured = new FrameEchoVerticle();
      FrameEchoServer facade = FrameEchoServer.create(vertx, options);
      facades.add(facade);
      return vertx.deployVerticle(typed)
        .compose(id -> vertx.deployVerticle(configured, new DeploymentOptions().setConfig(config)))
        .compose(id -> facade.listen())
        .compose(listening -> accepts(vertx, metricsPort))
        .compose(accepted -> {
          ctx.verify(() -> {
            assertEquals(0, typed.metricsPort(), "options in code");
            assertEquals(0, configured.metricsPort(), "the deployment's config");
            assertEquals(false, accepted, "something listens on the metrics port nobody asked for");
          });
          FrameEchoVerticle asked = new FrameEchoVerticle(new FrameEchoOptions(options)
            .setMetrics(new MetricsOptions(metrics).setEndpoint(true)));
          return vertx.deployVerticle(asked).compose(id -> {
            ctx.verify(() -> assertEquals(metricsPort, asked.metricsPort(), "asked for"));
            HttpClient http = vertx.createHttpClient();
            return http.request(HttpMethod.GET, metricsPort, "127.0.0.1", "/metrics")
              .compose(request -> request.send())
              .compose(response -> response.body().map(body -> response.statusCode() + " " + body))
              .eventually(http::close);
          });
        })
        .map(scrape -> {
          ctx.verify(() -> {
            assertEquals("200", scrape.substring(0, 3), scrape);
            assertEquals(true, scrape.contains("frame_echo_requests_total"), "the meters of the servers without an endpoint");
          });
          return null;
        });
    })
      .eventually(() -> Future.all(facades.stream().map(FrameEchoServer::close).toList()))
      .onComplete(ctx.succeedingThenComplete());
  }

  /** The jar's own way to change the answer: {@code handler.type} names a RequestHandler class, and its answer is on the wire. */
  @Test
  void aHandlerClassNamedInTheConfigAnswers(Vertx vertx, VertxTestContext ctx) {
    JsonObject upper = new JsonObject().put("handler", new JsonObject().put("type", "io.frameecho.example.UpperCaseHandler"));
    deploy(vertx, upper, 1, new RecordingMetrics())
      .compose(port -> FrameClient.connect(vertx, "127.0.0.1", port))
      .compose(client -> client.request(Buffer.buffer("hello, frame")).eventually(client::close))
      .onComplete(ctx.succeeding(answer -> ctx.verify(() -> {
        assertEquals("HELLO, FRAME", answer.toString());
        ctx.completeNow();
      })));
  }

  /** A class that is not a RequestHandler fails the deployment, naming the key and the reason. */
  @Test
  void aClassThatIsNotAHandlerFailsTheDeployment(Vertx vertx, VertxTestContext ctx) {
    JsonObject wrong = new JsonObject().put("handler", new JsonObject().put("type", "java.lang.String"));
    deploy(vertx, wrong, 1, new RecordingMetrics()).onComplete(ctx.failing(e -> ctx.verify(() -> {
      assertEquals("invalid frame-echo configuration: handler.type: java.lang.String does not implement "
        + "io.frameecho.server.RequestHandler", e.getMessage());
      ctx.completeNow();
    })));
  }
}
