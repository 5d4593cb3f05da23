package io.frameecho.example;

import io.frameecho.client.FrameClient;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.FrameEchoServer;
import io.frameecho.testkit.TestKeyStores;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.PfxOptions;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Runs the docs' Java code ({@link EmbeddingExamples}) against real servers: each snippet does what its page says. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 30, timeUnit = TimeUnit.SECONDS)
class EmbeddingExamplesTest {

  private static TestKeyStores stores;

  @BeforeAll
  static void makeStores() throws Exception {
    stores = TestKeyStores.create();
  }

  @AfterAll
  static void deleteStores() throws Exception {
    stores.delete();
  }

  private static String path(java.nio.file.Path p) {
    return p.toString();
  }

  @Test
  void deployedWithAConfigItEchoes(Vertx vertx, VertxTestContext ctx) {
    EmbeddingExamples.deployWithConfig(vertx)
      .compose(port -> EmbeddingExamples.firstEcho(vertx, port))
      .onComplete(ctx.succeeding(echo -> ctx.verify(() -> {
        assertEquals("hello", echo.toString());
        ctx.completeNow();
      })));
  }

  @Test
  void deployedByNameWithTwoInstances(Vertx vertx, VertxTestContext ctx) {
    // A negative port: one free port shared by both instances (a fixed port would do the same outside a test).
    EmbeddingExamples.deployByName(vertx, -1)
      .onComplete(ctx.succeeding(id -> ctx.verify(() -> {
        assertTrue(vertx.deploymentIDs().contains(id), "the class name and the config were accepted");
        ctx.completeNow();
      })));
  }

  @Test
  void typedOptionsWithTwoInstancesDeployThroughASupplier(Vertx vertx, VertxTestContext ctx) {
    EmbeddingExamples.deployInstances(vertx, request -> io.vertx.core.Future.succeededFuture(request))
      .onComplete(ctx.succeeding(id -> ctx.verify(() -> {
        assertEquals(2, ((io.vertx.core.internal.VertxInternal) vertx).deploymentManager().deployment(id).deployment()
          .instances().size(), "two instances");
        ctx.completeNow();
      })));
  }

  @Test
  void theRequestHandlerAnswersUpperCase(Vertx vertx, VertxTestContext ctx) {
    EmbeddingExamples.deployUpperCase(vertx)
      .compose(port -> EmbeddingExamples.firstEcho(vertx, port))
      .onComplete(ctx.succeeding(answer -> ctx.verify(() -> {
        assertEquals("HELLO", answer.toString());
        ctx.completeNow();
      })));
  }

  /**
   * A handler of one's own, even one that echoes, replaces the built-in echo, and its change reaches the wire; the
   * echoing handler still answers byte for byte.
   */
  @Test
  void aHandlerBuiltOnTheEchoReplacesItsFastPath(Vertx vertx, VertxTestContext ctx) {
    io.frameecho.server.RequestHandler echo = io.vertx.core.Future::succeededFuture;
    io.frameecho.server.RequestHandler shouting = request -> echo.handle(request).map(b -> Buffer.buffer(b.toString().toUpperCase()));
    EmbeddingExamples.listen(vertx, shouting)
      .compose(server -> EmbeddingExamples.firstEcho(vertx, server.actualPort()).compose(answer -> server.shutdown().map(answer)))
      .compose(shouted -> EmbeddingExamples.listen(vertx, echo)
        .compose(server -> EmbeddingExamples.firstEcho(vertx, server.actualPort()).compose(answer -> server.shutdown().map(answer)))
        .map(echoed -> shouted + " " + echoed))
      .onComplete(ctx.succeeding(answers -> ctx.verify(() -> {
        assertEquals("HELLO hello", answers);
        ctx.completeNow();
      })));
  }

  @Test
  void theFacadeListensAndShutsDown(Vertx vertx, VertxTestContext ctx) {
    EmbeddingExamples.listen(vertx, request -> Future.succeededFuture(request.copy().appendString("!")))
      .compose(server -> EmbeddingExamples.firstEcho(vertx, server.actualPort())
        .compose(answer -> server.shutdown().map(answer)))
      .onComplete(ctx.succeeding(answer -> ctx.verify(() -> {
        assertEquals("hello!", answer.toString());
        ctx.completeNow();
      })));
  }

  @Test
  void aServerOnAUnixSocketAnswersTheClientLibrary(Vertx vertx, VertxTestContext ctx) throws Exception {
    java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("frame-echo-example");
    java.nio.file.Path socket = dir.resolve("fe.sock");
    // On the test's Vert.x (NIO): the JDK's own unix sockets.
    EmbeddingExamples.unixSocketEcho(vertx, socket.toString())
      .eventually(() -> Future.join(vertx.deploymentIDs().stream().map(vertx::undeploy).toList()))
      .onComplete(ctx.succeeding(answer -> ctx.verify(() -> {
        assertEquals("over a unix socket", answer.toString());
        assertTrue(!java.nio.file.Files.exists(socket), "the server's close removed its socket file");
        java.nio.file.Files.delete(dir);
        ctx.completeNow();
      })));
  }

  @Test
  void aServerWithAHandoverSocketEchoes() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(io.vertx.core.transport.Transport.EPOLL.available(), "handover is epoll's");
    // A process of its own on epoll, stopped whole: with no successor, its stop removes the socket file.
    Vertx epoll = Vertx.builder().withTransport(io.vertx.core.transport.Transport.EPOLL).build();
    java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("frame-echo-example");
    java.nio.file.Path socket = dir.resolve("handover.sock");
    // A handover needs reusePort; on a machine with net.ipv4.tcp_migrate_req 0 the server warns at start, as it should.
    io.frameecho.testkit.LogCapture startup = io.frameecho.testkit.LogCapture.named("io.frameecho.server.FrameEchoServer");
    try {
      int port = EmbeddingExamples.deployWithHandover(epoll, socket.toString())
        .toCompletionStage().toCompletableFuture().get(20, java.util.concurrent.TimeUnit.SECONDS);
      assertTrue(java.nio.file.Files.exists(socket), "the server listens at its handover socket");
      assertEquals("hello", EmbeddingExamples.firstEcho(epoll, port)
        .toCompletionStage().toCompletableFuture().get(20, java.util.concurrent.TimeUnit.SECONDS).toString());
    } finally {
      epoll.close().toCompletionStage().toCompletableFuture().get(20, java.util.concurrent.TimeUnit.SECONDS);
      startup.close();
    }
    assertTrue(!java.nio.file.Files.exists(socket), "its stop, with no successor, removed the socket file");
    java.nio.file.Files.delete(dir);
  }

  @Test
  void theEventBusHandlerAnswersWithTheConsumersReply(Vertx vertx, VertxTestContext ctx) {
    EmbeddingExamples.deployEventBusHandler(vertx)
      .compose(port -> EmbeddingExamples.firstEcho(vertx, port))
      .onComplete(ctx.succeeding(answer -> ctx.verify(() -> {
        assertEquals("hello", answer.toString());
        ctx.completeNow();
      })));
  }

  @Test
  void mutualTlsServesAClientWithItsCertificate(Vertx vertx, VertxTestContext ctx) {
    EmbeddingExamples.deployMutualTls(vertx, path(stores.serverStore()), path(stores.serverTrust()), TestKeyStores.PASSWORD)
      .compose(port -> EmbeddingExamples.tlsEcho(vertx, port, path(stores.clientTrust()), path(stores.clientStore()),
        TestKeyStores.PASSWORD))
      .onComplete(ctx.succeeding(answer -> ctx.verify(() -> {
        assertEquals("over TLS", answer.toString());
        ctx.completeNow();
      })));
  }

  @Test
  void aRotatedCertificateServesNewHandshakesWhileAnOpenConnectionGoesOn(Vertx vertx, VertxTestContext ctx) throws Exception {
    java.nio.file.Path renewed = stores.newServerStore("renewed");
    PfxOptions original = new PfxOptions().setPath(path(stores.serverStore())).setPassword(TestKeyStores.PASSWORD);
    FrameEchoOptions options = new FrameEchoOptions().setHost("127.0.0.1").setPort(0)
      .setNetServerOptions(new NetServerOptions().setSsl(true).setKeyCertOptions(original));
    // The client trusts no certificate in particular: this test looks at which one the server presents.
    NetClientOptions anyCertificate = new NetClientOptions().setSsl(true).setTrustAll(true).setHostnameVerificationAlgorithm("");
    FrameEchoServer server = FrameEchoServer.create(vertx, options);
    server.listen()
      .compose(s -> FrameClient.connect(vertx, anyCertificate, "127.0.0.1", s.actualPort(), 1024))
      .compose(open -> EmbeddingExamples.rotate(server, path(renewed), TestKeyStores.PASSWORD)
        .compose(v -> open.request(Buffer.buffer("still here")))
        .compose(answer -> FrameClient.connect(vertx, anyCertificate, "127.0.0.1", server.actualPort(), 1024)
          .compose(fresh -> fresh.request(Buffer.buffer("new handshake")).eventually(fresh::close))
          .map(fresh -> answer + " / " + fresh))
        .eventually(open::close))
      .eventually(server::close)
      .onComplete(ctx.succeeding(answers -> ctx.verify(() -> {
        assertTrue(answers.equals("still here / new handshake"), answers);
        ctx.completeNow();
      })));
  }

  @Test
  void aNetSocketClientFramesBothDirectionsOfATwoByteBigEndianProtocol(Vertx vertx, VertxTestContext ctx) {
    FrameEchoOptions options = new FrameEchoOptions(new io.vertx.core.json.JsonObject().put("host", "127.0.0.1").put("port", 0)
      .put("framing", new io.vertx.core.json.JsonObject().put("lengthFieldLength", 2).put("byteOrder", "BIG_ENDIAN")));
    FrameEchoServer.create(vertx, options).listen()
      .compose(server -> EmbeddingExamples.shortBigEndianClient(vertx, server.actualPort()))
      .onComplete(ctx.succeeding(answer -> ctx.verify(() -> {
        assertEquals("ping", answer.toString());
        ctx.completeNow();
      })));
  }

  @Test
  void theConfigurationFileServesALengthThatCountsItsHeader(Vertx vertx, VertxTestContext ctx) {
    io.frameecho.protocol.LengthField form = io.frameecho.protocol.LengthField.of(4, java.nio.ByteOrder.BIG_ENDIAN)
      .withLengthAdjustment(-4);
    // Held until closed: a client the garbage collector finds unreferenced, Vert.x closes, with its sockets.
    io.vertx.core.net.NetClient client = vertx.createNetClient();
    EmbeddingExamples.lengthIncludesHeaderServer(vertx, "conf/length-includes-header.json", 0)
      .compose(port -> client.connect(port, "127.0.0.1"))
      .compose(socket -> {
        io.vertx.core.Promise<Buffer> answer = io.vertx.core.Promise.promise();
        io.frameecho.protocol.FrameStream.newParser(form, 1000, socket).handler(answer::tryComplete)
          .endHandler(v -> answer.tryFail("the connection ended before an answer"));
        // The length 7 counts the 4 header bytes and "abc".
        socket.write(Buffer.buffer(new byte[] {0, 0, 0, 7, 'a', 'b', 'c'}));
        return answer.future();
      })
      .eventually(client::close)
      .onComplete(ctx.succeeding(answer -> ctx.verify(() -> {
        assertEquals("abc", answer.toString());
        ctx.completeNow();
      })));
  }
}
