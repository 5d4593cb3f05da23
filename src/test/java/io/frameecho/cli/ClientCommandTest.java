package io.frameecho.cli;

import io.frameecho.server.CloseReason;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.FrameEchoServer;
import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.RefusedPort;
import io.frameecho.testkit.RecordingMetrics;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(VertxExtension.class)
@org.junit.jupiter.api.Timeout(value = 60, unit = TimeUnit.SECONDS)
class ClientCommandTest {

  /** The handler failure a test causes logs a WARN line; captured, it stays off the console. */
  @RegisterExtension
  final LogCapture connectionLog = LogCapture.of("io.frameecho.server.impl.Connection");

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(String... args) {
    return ClientCommand.commandLine(new PrintStream(out, true, StandardCharsets.UTF_8),
      new PrintStream(err, true, StandardCharsets.UTF_8)).execute(args);
  }

  private static int startServer(Vertx vertx) throws Exception {
    return FrameEchoServer.create(vertx, new FrameEchoOptions().setHost("127.0.0.1").setPort(0)).listen()
      .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS).actualPort();
  }

  @Test
  void sendsItsArgumentsAndPrintsTheResponses(Vertx vertx) throws Exception {
    int port = startServer(vertx);
    assertEquals(0, run("--port", String.valueOf(port), "hello", "", "w\u00f6rld"));
    assertEquals("len:5 data:hello\nlen:0 data:\nlen:6 data:w\u00c3\u00b6rld\n", out.toString(StandardCharsets.UTF_8).replace("\r", ""));
  }

  @Test
  void speaksTheServersFramingWhenToldIt(Vertx vertx) throws Exception {
    String framing = "{\"lengthFieldLength\":2,\"byteOrder\":\"BIG_ENDIAN\",\"lengthAdjustment\":-2}";
    int port = FrameEchoServer.create(vertx, new FrameEchoOptions(new io.vertx.core.json.JsonObject().put("host", "127.0.0.1")
        .put("port", 0).put("framing", new io.vertx.core.json.JsonObject(framing)))).listen()
      .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS).actualPort();
    assertEquals(0, run("--port", String.valueOf(port), "--framing", framing, "hello", ""));
    assertEquals("len:5 data:hello\nlen:0 data:\n", out.toString(StandardCharsets.UTF_8).replace("\r", ""));
    assertEquals(2, run("--framing", "{\"byteOrder\":\"big\"}"));
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("--framing byteOrder: expected \"BIG_ENDIAN\" or \"LITTLE_ENDIAN\" but got \"big\""),
      err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void withoutArgumentsRunsTheBooksScenario(Vertx vertx) throws Exception {
    int port = startServer(vertx);
    assertEquals(0, run("-p", String.valueOf(port)));
    String[] lines = out.toString(StandardCharsets.UTF_8).split("\n");
    assertEquals(5, lines.length);
    assertEquals("len:6 data:hello1", lines[0]);
    assertEquals("len:6 data:hello3", lines[2]);
    assertEquals("len:33554432 data:" + "z".repeat(100), lines[3]);
    assertEquals("len:6 data:hello5", lines[4]);
  }

  /** A server that answers two of three requests and closes: the two answers are printed, then the error. */
  @Test
  void printsTheAnswersThatArrivedThenTheError(Vertx vertx) throws Exception {
    RecordingMetrics serverEvents = new RecordingMetrics();
    int port = FrameEchoServer.create(vertx, new FrameEchoOptions().setHost("127.0.0.1").setPort(0))
      .requestHandler(request -> request.toString().equals("three")
        ? Future.failedFuture(new IllegalStateException("no")) : Future.succeededFuture(request))
      .metrics(serverEvents)
      .listen().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS).actualPort();
    assertEquals(1, run("--port", String.valueOf(port), "one", "two", "three"));
    assertEquals("len:3 data:one\nlen:3 data:two\n", out.toString(StandardCharsets.UTF_8).replace("\r", ""));
    assertEquals("frame-echo client: connection closed by the server\n", err.toString(StandardCharsets.UTF_8).replace("\r", ""));
    serverEvents.closes(1).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertEquals(List.of(CloseReason.HANDLER_FAILED), serverEvents.closeReasons(), "the server ended it, for its failed handler");
  }

  @Test
  void failsWithAClearMessageWhenNobodyListens(Vertx vertx) throws Exception {
    int port = RefusedPort.of(vertx).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertEquals(1, run("--port", String.valueOf(port), "x"));
    assertTrue(err.toString(StandardCharsets.UTF_8).startsWith("frame-echo client: refused: nothing accepts connections on 127.0.0.1:"), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void connectsToAUnixSocket(Vertx vertx, @TempDir Path dir) throws Exception {
    Path socket = dir.resolve("fe.sock");
    FrameEchoServer.create(vertx, new FrameEchoOptions().setUnixSocket(socket.toString())).listen()
      .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertEquals(0, run("--unix-socket", socket.toString(), "hello", "unix"));
    assertEquals("len:5 data:hello\nlen:4 data:unix\n", out.toString(StandardCharsets.UTF_8).replace("\r", ""));
  }

  @Test
  void aUnixSocketNobodyListensOnIsRefused(@TempDir Path dir) {
    Path socket = dir.resolve("none.sock");
    assertEquals(1, run("--unix-socket", socket.toString(), "x"));
    assertTrue(err.toString(StandardCharsets.UTF_8).startsWith("frame-echo client: refused: nothing accepts connections on unix:" + socket + " ("),
      err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void aUnixSocketWithAPortIsAUsageError() {
    assertEquals(2, run("--unix-socket", "/tmp/fe.sock", "--port", "1234", "x"));
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("--unix-socket and --port exclude each other"), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void badOptionIsAUsageError() {
    assertEquals(2, run("--port", "not-a-number"));
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("--port"));
  }

  /** Mutual TLS: a server that requires a client certificate serves the client given --cert and --key, and no other. */
  @Test
  void presentsItsCertificateToAServerThatAsksForOne(Vertx vertx) throws Exception {
    io.vertx.core.net.SelfSignedCertificate server = io.vertx.core.net.SelfSignedCertificate.create("localhost");
    io.vertx.core.net.SelfSignedCertificate client = io.vertx.core.net.SelfSignedCertificate.create("frame-echo-client");
    try {
      int port = FrameEchoServer.create(vertx, new FrameEchoOptions().setHost("127.0.0.1").setPort(0)
          .setNetServerOptions(new io.vertx.core.net.NetServerOptions().setSsl(true).setKeyCertOptions(server.keyCertOptions())
            .setClientAuth(io.vertx.core.http.ClientAuth.REQUIRED)
            .setTrustOptions(new io.vertx.core.net.PemTrustOptions().addCertPath(client.certificatePath()))))
        .listen().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS).actualPort();
      String[] tls = {"--port", String.valueOf(port), "--tls", "--trust", server.certificatePath(), "--no-verify-host"};
      String[] withCertificate = java.util.stream.Stream.concat(java.util.Arrays.stream(tls),
        java.util.stream.Stream.of("--cert", client.certificatePath(), "--key", client.privateKeyPath(), "mine")).toArray(String[]::new);
      assertEquals(0, run(withCertificate), err.toString(StandardCharsets.UTF_8));
      assertEquals("len:4 data:mine\n", out.toString(StandardCharsets.UTF_8).replace("\r", ""));

      String[] without = java.util.stream.Stream.concat(java.util.Arrays.stream(tls), java.util.stream.Stream.of("anonymous"))
        .toArray(String[]::new);
      assertTrue(run(without) != 0, "a client without a certificate was served");
      err.reset();
      assertEquals(2, run("--port", String.valueOf(port), "--tls", "--cert", client.certificatePath(), "x"));
      assertTrue(err.toString(StandardCharsets.UTF_8).contains("--cert needs --key"), err.toString(StandardCharsets.UTF_8));
    } finally {
      server.delete();
      client.delete();
    }
  }
}
