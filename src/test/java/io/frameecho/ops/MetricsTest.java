package io.frameecho.ops;

import io.frameecho.protocol.LengthField;
import io.frameecho.server.FrameEchoVerticle;
import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.RawConnection;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.vertx.micrometer.VertxPrometheusOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.DoublePredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The metrics and health endpoint, scraped with a real HTTP client after known traffic, on a Vert.x
 * started with Micrometer metrics as the launcher starts it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetricsTest {

  private Vertx vertx;
  private HttpClient http;
  /** Loggers whose expected WARN lines a test keeps out of the build's output; detached after it. */
  private final List<LogCapture> captures = new ArrayList<>();

  @BeforeEach
  void startVertx() {
    vertx = Vertx.builder().with(new VertxOptions().setMetricsOptions(new MicrometerMetricsOptions().setEnabled(true)
      .setPrometheusOptions(new VertxPrometheusOptions().setEnabled(true)))).build();
    http = vertx.createHttpClient();
  }

  @AfterEach
  void stopVertx() throws Exception {
    await(vertx.close());
    captures.forEach(LogCapture::close);
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private FrameEchoVerticle deploy(JsonObject config) throws Exception {
    FrameEchoVerticle verticle = new FrameEchoVerticle();
    JsonObject c = new JsonObject().put("host", "127.0.0.1").put("port", 0)
      .put("metrics", new JsonObject().put("enabled", true).put("endpoint", true).put("host", "127.0.0.1").put("port", 0)).mergeIn(config);
    await(vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(c)));
    return verticle;
  }

  /**
   * A metrics port already in use fails the deployment, naming it, and the frame port that was bound a
   * moment before is closed again: an application that goes on keeps no half-started server.
   */
  @Test
  void aMetricsPortInUseFailsTheDeploymentAndFreesTheFramePort() throws Exception {
    int framePort = await(vertx.createNetServer().connectHandler(s -> s.close()).listen(0, "127.0.0.1")
      .compose(s -> s.close().map(v -> s.actualPort())));
    io.vertx.core.net.NetServer holder = await(vertx.createNetServer().connectHandler(s -> s.close()).listen(0, "127.0.0.1"));
    int metricsPort = holder.actualPort();
    JsonObject c = new JsonObject().put("host", "127.0.0.1").put("port", framePort)
      .put("metrics", new JsonObject().put("enabled", true).put("endpoint", true).put("host", "127.0.0.1").put("port", metricsPort));
    Throwable failure = vertx.deployVerticle(new FrameEchoVerticle(), new DeploymentOptions().setConfig(c))
      .toCompletionStage().toCompletableFuture().handle((id, error) -> error).get(30, TimeUnit.SECONDS);
    assertTrue(failure != null && String.valueOf(failure.getMessage()).contains("metrics endpoint cannot listen on 127.0.0.1:" + metricsPort),
      String.valueOf(failure));
    // Nothing listens on the frame port any more: Vert.x reports the failed deployment a moment before it has
    // closed the frame server it opened (issue #22), so the port is given that moment, bounded.
    boolean refused = false;
    for (int i = 0; i < 100 && !refused; i++) {
      try (java.net.Socket probe = new java.net.Socket("127.0.0.1", framePort)) {
        await(vertx.timer(20, TimeUnit.MILLISECONDS));
      } catch (java.net.ConnectException e) {
        refused = true;
      }
    }
    assertTrue(refused, "the frame port still accepts connections 2 s after the deployment failed");
    await(holder.close());
  }

  /** With metrics on, a frame port in use is reported as the frame port, not as the metrics endpoint. */
  @Test
  void aFramePortInUseIsNotBlamedOnTheMetricsEndpoint() throws Exception {
    // Another Vert.x holds the port: within one Vert.x, servers on one port share it instead of failing.
    Vertx other = Vertx.vertx();
    try {
      int framePort = await(other.createNetServer().connectHandler(s -> s.close()).listen(0, "127.0.0.1")).actualPort();
      JsonObject c = new JsonObject().put("host", "127.0.0.1").put("port", framePort)
        .put("metrics", new JsonObject().put("enabled", true).put("endpoint", true).put("host", "127.0.0.1").put("port", 0));
      Throwable failure = vertx.deployVerticle(new FrameEchoVerticle(), new DeploymentOptions().setConfig(c))
        .toCompletionStage().toCompletableFuture().handle((id, error) -> error).get(30, TimeUnit.SECONDS);
      String message = String.valueOf(failure == null ? null : failure.getMessage());
      assertTrue(message.startsWith("cannot listen on 127.0.0.1:" + framePort), message);
    } finally {
      await(other.close());
    }
  }

  private Future<HttpClientResponse> get(int port, String path) {
    return http.request(HttpMethod.GET, port, "127.0.0.1", path).compose(req -> req.send());
  }

  /** Status code and body, read together. */
  private String fetch(int port, String path) throws Exception {
    return await(get(port, path).compose(resp -> resp.body().map(body -> resp.statusCode() + " " + body)));
  }

  /** The scrape without the {@code server} tag every frame-echo meter carries: one server here. */
  private String scrape(int port) throws Exception {
    String text = await(get(port, "/metrics").compose(HttpClientResponse::body)).toString();
    return text.replaceAll(",?server=\"[^\"]*\"", "").replace("{,", "{").replace("{}", "");
  }

  private static double value(String scrape, String series) {
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(scrape);
    assertTrue(m.find(), "no " + series + " in\n" + scrape);
    return Double.parseDouble(m.group(1));
  }

  /**
   * Waits until the meter {@code series} reads at least {@code atLeast}: the meter is the event (a counter is
   * created at its first count, so it may be absent before). Scraped every 20 ms, at most 500 times.
   */
  private void awaitMeter(int metricsPort, String series, double atLeast) throws Exception {
    awaitMeter(metricsPort, series, "at least " + atLeast, value -> value >= atLeast);
  }

  private void awaitMeter(int metricsPort, String series, String expected, DoublePredicate condition) throws Exception {
    Pattern line = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$");
    String text = "";
    for (int i = 0; i < 500; i++) {
      text = scrape(metricsPort);
      Matcher m = line.matcher(text);
      if (m.find() && condition.test(Double.parseDouble(m.group(1)))) {
        return;
      }
      await(vertx.timer(20, TimeUnit.MILLISECONDS));
    }
    fail(series + " never " + expected + " in\n" + text);
  }

  @Test
  void countsWhatHappened() throws Exception {
    FrameEchoVerticle verticle = deploy(new JsonObject().put("maxConnections", 3).put("idleGiveWayMs", 0).put("frameTimeoutMs", 300));
    int port = verticle.actualPort();
    // The protocol error and the turned-away connections below are meant: their WARN lines are captured.
    captures.add(LogCapture.named("io.frameecho.server.impl.Connection"));
    captures.add(LogCapture.named("io.frameecho.server.impl.ConnectionLimits"));
    int requests = 10;
    int size = 100_000;

    // Ten 100 kB requests on one connection.
    RawConnection client = await(RawConnection.open(vertx, port));
    Buffer stream = Buffer.buffer();
    for (int i = 0; i < requests; i++) {
      stream.appendBuffer(LengthField.DEFAULT.frame(Buffer.buffer(new byte[size])));
    }
    await(client.write(stream).compose(v -> client.expectFrames(requests)));
    // One protocol error, one frame that never completes; each counted (and its place given back) before the next.
    RawConnection bad = await(RawConnection.open(vertx, port));
    await(bad.write(Buffer.buffer().appendIntLE(-1)).compose(v -> bad.closed()));
    awaitMeter(verticle.metricsPort(), "frame_echo_connections_closed_total{reason=\"protocol_error\"}", 1);
    RawConnection slow = await(RawConnection.open(vertx, port));
    await(slow.write(Buffer.buffer(new byte[] {1, 0})).compose(v -> slow.closed()));
    awaitMeter(verticle.metricsPort(), "frame_echo_connections_closed_total{reason=\"frame_timeout\"}", 1);
    // Three more while the first is open: maxConnections is 3, so... all three fit (the other two are gone)
    // and two more are turned away.
    List<RawConnection> extra = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      extra.add(await(RawConnection.open(vertx, port)));
    }
    for (RawConnection c : extra) {
      c.write(LengthField.DEFAULT.frame(Buffer.buffer("x")));
    }
    await(Future.all(extra.subList(2, 4).stream().map(RawConnection::closed).toList()));
    await(Future.all(extra.subList(0, 2).stream().map(c -> c.expectFrames(1)).toList()));
    // A turned-away socket is open until the client answers the server's FIN (or a second passes): Vert.x's own
    // meter counts it until then.
    awaitMeter(verticle.metricsPort(), "vertx_net_server_active_connections", "back to 3", value -> value == 3);

    String text = scrape(verticle.metricsPort());
    assertEquals(requests + 2, value(text, "frame_echo_requests_total"));
    assertEquals(requests + 2, value(text, "frame_echo_responses_total"));
    assertEquals(requests + 2, value(text, "frame_echo_frame_size_bytes_count"));
    assertEquals(requests * size + 2, value(text, "frame_echo_frame_size_bytes_sum"));
    assertEquals(requests, value(text, "frame_echo_frame_size_bytes_bucket{le=\"1048576.0\"}") - value(text, "frame_echo_frame_size_bytes_bucket{le=\"65536.0\"}"));
    assertEquals(requests + 2, value(text, "frame_echo_request_latency_seconds_count"));
    assertEquals(1, value(text, "frame_echo_protocol_errors_total"));
    assertEquals(1, value(text, "frame_echo_connections_closed_total{reason=\"protocol_error\"}"));
    assertEquals(1, value(text, "frame_echo_connections_closed_total{reason=\"frame_timeout\"}"));
    assertEquals(2, value(text, "frame_echo_connections_rejected_total{limit=\"maxConnections\"}"));
    assertEquals(3, value(text, "frame_echo_connections_open"));
    assertEquals(3, value(text, "vertx_net_server_active_connections"));
    // Vert.x counts bytes in 4 KiB steps per connection: within that of what was really sent.
    double sent = requests * (4.0 + size) + 4 + 2 + 2 * 5;
    double read = value(text, "vertx_net_server_bytes_read_total");
    assertTrue(read <= sent && read >= sent - 4096 * 7, "bytes read " + read + " for " + sent + " sent");

    await(Future.all(client.close(), extra.get(0).close(), extra.get(1).close()));
    for (RawConnection c : List.of(bad, slow, extra.get(2), extra.get(3))) {
      await(c.close());
    }
  }

  /**
   * With TLS, a client that has not finished its handshake is an open connection from accept; failed handshakes
   * are counted by cause, every cause's counter present at 0 from the start.
   */
  @Test
  void tlsHandshakesAreOpenConnectionsAndFailuresAreCounted() throws Exception {
    io.vertx.core.net.SelfSignedCertificate certificate = io.vertx.core.net.SelfSignedCertificate.create("localhost");
    try {
      captures.add(LogCapture.named("io.frameecho.server.impl.ConnectionLimits"));
      FrameEchoVerticle verticle = deploy(new JsonObject()
        .put("tls", new JsonObject().put("certPath", certificate.certificatePath()).put("keyPath", certificate.privateKeyPath())));
      String text = scrape(verticle.metricsPort());
      for (String cause : List.of("timeout", "not_tls", "failed")) {
        assertEquals(0, value(text, "frame_echo_tls_handshakes_failed_total{cause=\"" + cause + "\"}"));
      }
      RawConnection silent = await(RawConnection.open(vertx, verticle.actualPort()));
      awaitMeter(verticle.metricsPort(), "frame_echo_connections_open", 1);
      RawConnection plain = await(RawConnection.open(vertx, verticle.actualPort()));
      await(plain.write(LengthField.DEFAULT.frame(Buffer.buffer("in clear"))).compose(v -> plain.closed()));
      awaitMeter(verticle.metricsPort(), "frame_echo_tls_handshakes_failed_total{cause=\"not_tls\"}", 1);
      awaitMeter(verticle.metricsPort(), "frame_echo_connections_open", "back to 1", value -> value == 1);
      await(silent.close());
      awaitMeter(verticle.metricsPort(), "frame_echo_connections_open", "back to 0", value -> value == 0);
      await(plain.close());
    } finally {
      certificate.delete();
    }
  }

  @Test
  void pausedConnectionsAreAGauge() throws Exception {
    FrameEchoVerticle verticle = deploy(new JsonObject().put("writeQueueMaxSize", 1024));
    RawConnection reader = await(RawConnection.open(vertx, verticle.actualPort()));
    reader.stopReading();
    // Far more than the kernel buffers hold: the server's write queue fills and it stops reading.
    Buffer big = LengthField.DEFAULT.frame(Buffer.buffer(new byte[16 << 20]));
    reader.write(big);
    reader.write(big);
    double paused = 0;
    for (int i = 0; i < 100 && paused == 0; i++) {
      paused = value(scrape(verticle.metricsPort()), "frame_echo_connections_paused");
      if (paused == 0) {
        await(vertx.timer(50, TimeUnit.MILLISECONDS));
      }
    }
    assertEquals(1, paused);
    reader.startReading();
    await(reader.expectFrames(2));
    assertEquals(0, value(scrape(verticle.metricsPort()), "frame_echo_connections_paused"));
    await(reader.close());
  }

  @Test
  void readinessTurnsFalseBeforeTheServerStopsAccepting() throws Exception {
    FrameEchoVerticle verticle = deploy(new JsonObject().put("drainDelayMs", 1500));
    int metricsPort = verticle.metricsPort();
    assertEquals("200 {\"status\":\"UP\"}\n", fetch(metricsPort, "/health/ready"));
    assertEquals("200 {\"status\":\"UP\"}\n", fetch(metricsPort, "/health/live"));

    String id = vertx.deploymentIDs().iterator().next();
    Future<Void> undeployed = vertx.undeploy(id);
    // The undeploy reaches the verticle's event loop a moment later: ask until readiness has turned.
    String ready = fetch(metricsPort, "/health/ready");
    for (int i = 0; i < 50 && ready.startsWith("200"); i++) {
      await(vertx.timer(10, TimeUnit.MILLISECONDS));
      ready = fetch(metricsPort, "/health/ready");
    }
    assertEquals("503 {\"status\":\"DOWN\"}\n", ready);
    // Still accepting while the load balancer catches up.
    RawConnection late = await(RawConnection.open(vertx, verticle.actualPort()));
    assertEquals(List.of(Buffer.buffer("late")), await(late.write(LengthField.DEFAULT.frame(Buffer.buffer("late"))).compose(v -> late.expectFrames(1))));
    await(late.close());
    await(undeployed);
  }

  /**
   * With metrics off nothing listens on the metrics port, even one the configuration names and asks an endpoint on;
   * the same configuration with metrics on opens it, so the probe would have found an endpoint had there been one.
   */
  @Test
  void metricsOffMeansNoEndpoint() throws Exception {
    int metricsPort = freePort();
    JsonObject metricsOff = new JsonObject().put("host", "127.0.0.1").put("port", 0)
      .put("metrics", new JsonObject().put("enabled", false).put("endpoint", true).put("host", "127.0.0.1").put("port", metricsPort));
    FrameEchoVerticle off = new FrameEchoVerticle();
    String id = await(vertx.deployVerticle(off, new DeploymentOptions().setConfig(metricsOff)));
    RawConnection client = await(RawConnection.open(vertx, off.actualPort()));
    assertEquals(List.of(Buffer.buffer("up")), await(client.write(LengthField.DEFAULT.frame(Buffer.buffer("up"))).compose(v -> client.expectFrames(1))),
      "the frame server itself is up");
    await(client.close());
    assertEquals(0, off.metricsPort());
    assertThrows(ConnectException.class, () -> new Socket("127.0.0.1", metricsPort).close(),
      "something listens on the metrics port with metrics off");
    await(vertx.undeploy(id));

    FrameEchoVerticle on = new FrameEchoVerticle();
    JsonObject metricsOn = metricsOff.copy();
    metricsOn.getJsonObject("metrics").put("enabled", true);
    await(vertx.deployVerticle(on, new DeploymentOptions().setConfig(metricsOn)));
    assertEquals(metricsPort, on.metricsPort());
    assertEquals("200 {\"status\":\"UP\"}\n", fetch(metricsPort, "/health/live"));
  }

  /** A loopback port that was free a moment ago: bound, learnt, freed. */
  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      return socket.getLocalPort();
    }
  }
}
