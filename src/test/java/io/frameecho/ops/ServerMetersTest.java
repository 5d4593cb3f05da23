package io.frameecho.ops;

import ch.qos.logback.classic.Level;
import io.frameecho.server.FrameEchoVerticle;
import io.frameecho.testkit.LogCapture;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.vertx.micrometer.VertxPrometheusOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.Socket;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Meters decided per server, not per Vert.x: a server with metrics on has them whatever the servers before it
 * chose, each server's meters carry its {@code server} tag, the application's registry is found by name, no HTTP
 * port is opened unless asked for, and Micrometer has nothing to warn about. Also the meters an operator alerts
 * on: the configured limits, build info, file descriptors, every counter from the start.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ServerMetersTest {

  /** Micrometer's warnings (a gauge registered twice) would show here. */
  @RegisterExtension
  final LogCapture micrometer = LogCapture.of("io.micrometer.core.instrument.MeterRegistry");

  /** The endpoint's start-up line, counted by level. */
  @RegisterExtension
  final LogCapture verticleLog = LogCapture.of(FrameEchoVerticle.class);

  private Vertx vertx;

  @AfterEach
  void close() throws Exception {
    if (vertx != null) {
      await(vertx.close());
    }
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private FrameEchoVerticle deploy(JsonObject config) throws Exception {
    FrameEchoVerticle verticle = new FrameEchoVerticle();
    await(vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(new JsonObject().put("host", "127.0.0.1")
      .put("port", 0).mergeIn(config, true))));
    return verticle;
  }

  private static JsonObject metrics(JsonObject section) {
    return new JsonObject().put("metrics", new JsonObject().put("enabled", true).put("host", "127.0.0.1").put("port", 0)
      .mergeIn(section));
  }

  /** Held until the answer is in: Vert.x closes a client nothing refers to any more, in the middle of a request. */
  private Scrape scrape(int port) throws Exception {
    HttpClient http = vertx.createHttpClient();
    try {
      return Scrape.parse(await(http.request(HttpMethod.GET, port, "127.0.0.1", "/metrics")
        .compose(req -> req.send()).compose(HttpClientResponse::body)).toString());
    } finally {
      await(http.close());
    }
  }

  /** The status of a GET of {@code path} on the endpoint at {@code port}, and its body. */
  private String get(int port, String path) throws Exception {
    HttpClient http = vertx.createHttpClient();
    try {
      return await(http.request(HttpMethod.GET, port, "127.0.0.1", path).compose(req -> req.send())
        .compose(response -> response.body().map(body -> response.statusCode() + " " + body)));
    } finally {
      await(http.close());
    }
  }

  /** One echo over a plain socket: a Vert.x client would register Vert.x's own client meters in the registry. */
  private static void echoOnce(int port) throws Exception {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(new byte[] {1, 0, 0, 0, 'x'});
      byte[] answer = socket.getInputStream().readNBytes(5);
      assertEquals('x', answer.length == 5 ? answer[4] : -1, "echoed");
    }
  }

  /**
   * Micrometer said nothing about frame-echo's meters (a gauge registered twice). It warns once per process, then
   * at DEBUG, about Vert.x's own connection gauges (vertx-micrometer-metrics registers them per connection:
   * vert-x3/vertx-micrometer-metrics#259), which any Vert.x server or client causes; that one is not ours.
   */
  private void assertNoWarning() {
    long ours = micrometer.count(Level.WARN, "frame.echo") + micrometer.count(Level.DEBUG, "frame.echo");
    assertEquals(0, ours, "Micrometer complained about frame-echo's meters");
  }

  @Test
  void aLaterServerWithMetricsHasThemAndEachServerItsTag() throws Exception {
    vertx = Vertx.vertx();
    FrameEchoVerticle first = deploy(new JsonObject());
    FrameEchoVerticle second = deploy(metrics(new JsonObject().put("server", "second").put("endpoint", true)).put("maxConnections", 7)
      .put("maxBufferedBytes", 1 << 20));
    FrameEchoVerticle third = deploy(metrics(new JsonObject().put("server", "third")));
    assertEquals(0, first.metricsPort());
    assertEquals(0, third.metricsPort(), "no port of ours unless asked for");
    echoOnce(first.actualPort());
    echoOnce(second.actualPort());
    echoOnce(second.actualPort());
    echoOnce(third.actualPort());

    Scrape scrape = scrape(second.metricsPort());
    assertEquals(2, scrape.value("frame_echo_requests_total", Map.of("server", "second")));
    assertEquals(1, scrape.value("frame_echo_requests_total", Map.of("server", "third")));
    assertEquals(2, scrape.series("frame_echo_requests_total").size(), "the first server, without metrics, has none");
    // The configured limits beside what they limit.
    assertEquals(7, scrape.value("frame_echo_connections_max", Map.of("server", "second")));
    assertEquals(1 << 20, scrape.value("frame_echo_buffered_max_bytes", Map.of("server", "second")));
    assertEquals(10_000, scrape.value("frame_echo_connections_max", Map.of("server", "third")));
    // Every counter from the start, at 0.
    assertEquals(0, scrape.value("frame_echo_connections_closed_total", Map.of("server", "second", "reason", "budget_evicted")));
    assertEquals(0, scrape.value("frame_echo_connections_rejected_total", Map.of("server", "second", "limit", "maxConnectionsPerIp")));
    assertEquals(0, scrape.value("frame_echo_protocol_errors_total", Map.of("server", "third")));
    assertEquals(0, scrape.value("frame_echo_connections_requests_lost_total", Map.of("server", "second", "cause", "after_close")));
    assertEquals(0, scrape.value("frame_echo_connections_requests_lost_total", Map.of("server", "third", "cause", "cut")));
    // Build info and the process's file descriptors.
    Scrape.Series info = scrape.series("frame_echo_build_info").get(0);
    assertEquals(1, info.value());
    assertEquals(Set.of("version", "vertx_version", "transport"), info.labels().keySet());
    assertTrue(info.labels().get("vertx_version").startsWith("5."), info.toString());
    assertTrue(scrape.value("process_files_open_files", Map.of()) > 0);
    assertTrue(scrape.value("process_files_max_files", Map.of()) >= scrape.value("process_files_open_files", Map.of()));
    assertNoWarning();
  }

  @Test
  void aRedeployedServerFindsItsMetersAndMicrometerHasNothingToWarnAbout() throws Exception {
    vertx = Vertx.builder().with(new VertxOptions().setMetricsOptions(new MicrometerMetricsOptions().setEnabled(true)
      .setPrometheusOptions(new VertxPrometheusOptions().setEnabled(true)))).build();
    JsonObject config = metrics(new JsonObject().put("server", "s").put("endpoint", true)).put("port", 0);
    FrameEchoVerticle one = deploy(config);
    echoOnce(one.actualPort());
    await(vertx.undeploy(vertx.deploymentIDs().iterator().next()));
    FrameEchoVerticle again = deploy(config);
    echoOnce(again.actualPort());
    echoOnce(again.actualPort());
    Scrape scrape = scrape(again.metricsPort());
    assertEquals(3, scrape.value("frame_echo_requests_total", Map.of("server", "s")), "one set of meters, counting on");
    assertNoWarning();
  }

  @Test
  void theApplicationsRegistryIsFoundByName() throws Exception {
    MeterRegistry app = new SimpleMeterRegistry();
    vertx = Vertx.builder().with(new VertxOptions().setMetricsOptions(new MicrometerMetricsOptions().setEnabled(true)
      .setRegistryName("app"))).withMetrics(new MicrometerMetricsFactory(app)).build();
    FrameEchoVerticle verticle = deploy(metrics(new JsonObject().put("registryName", "app")));
    assertEquals(0, verticle.metricsPort(), "the application did not ask for a port");
    echoOnce(verticle.actualPort());
    assertNotNull(app.find("frame.echo.requests").tag("server", "0").counter());
    assertEquals(1, app.find("frame.echo.requests").counter().count());
    assertNotNull(app.find("frame.echo.connections.max").gauge());
    assertNoWarning();

    Throwable failure = vertx.deployVerticle(new FrameEchoVerticle(), new DeploymentOptions().setConfig(
        new JsonObject().put("host", "127.0.0.1").put("port", 0).mergeIn(metrics(new JsonObject().put("registryName", "nope")))))
      .toCompletionStage().toCompletableFuture().handle((id, e) -> e).get(30, TimeUnit.SECONDS);
    assertNotNull(failure);
    assertTrue(failure.getMessage().contains("metrics.registryName: no Micrometer registry named 'nope'"), failure.getMessage());
  }

  /**
   * Found by an embedder's trial: with the application's registry a SimpleMeterRegistry, the start-up line advertised
   * /metrics, which answered 404. The endpoint still serves health, and says once, at WARN, that /metrics has nothing
   * to show (instead of the INFO line that advertises it).
   */
  @Test
  void anEndpointOverANonPrometheusRegistryServesHealthAndWarnsOnceInsteadOfAdvertisingMetrics() throws Exception {
    vertx = Vertx.builder().with(new VertxOptions().setMetricsOptions(new MicrometerMetricsOptions().setEnabled(true)
      .setRegistryName("app"))).withMetrics(new MicrometerMetricsFactory(new SimpleMeterRegistry())).build();
    FrameEchoVerticle verticle = deploy(metrics(new JsonObject().put("registryName", "app").put("endpoint", true)));
    assertTrue(verticle.metricsPort() > 0, "the endpoint is open");
    assertTrue(get(verticle.metricsPort(), "/health/live").startsWith("200 "));
    assertTrue(get(verticle.metricsPort(), "/health/ready").startsWith("200 "));
    assertTrue(get(verticle.metricsPort(), "/metrics").startsWith("404 "));
    assertEquals(1, verticleLog.count(Level.WARN), "one WARN line at start");
    assertEquals(0, verticleLog.count(Level.INFO), "no line advertises /metrics");
  }

  /** A CompositeMeterRegistry that holds a Prometheus registry is scraped through that one. */
  @Test
  void aCompositeRegistryHoldingAPrometheusOneIsScraped() throws Exception {
    CompositeMeterRegistry app = new CompositeMeterRegistry();
    app.add(new SimpleMeterRegistry());
    app.add(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
    vertx = Vertx.builder().with(new VertxOptions().setMetricsOptions(new MicrometerMetricsOptions().setEnabled(true)
      .setRegistryName("app"))).withMetrics(new MicrometerMetricsFactory(app)).build();
    FrameEchoVerticle verticle = deploy(metrics(new JsonObject().put("registryName", "app").put("endpoint", true)
      .put("server", "s")));
    echoOnce(verticle.actualPort());
    Scrape scrape = scrape(verticle.metricsPort());
    assertEquals(1, scrape.value("frame_echo_requests_total", Map.of("server", "s")));
    assertEquals(0, verticleLog.count(Level.WARN));
    assertEquals(1, verticleLog.count(Level.INFO), "the line advertising /metrics");
  }
}
