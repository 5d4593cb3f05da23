package example;

import io.frameecho.client.FrameClient;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.FrameEchoServer;
import io.frameecho.server.FrameEchoVerticle;
import io.frameecho.server.HandshakeFailure;
import io.frameecho.server.Rejection;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.PfxOptions;
import io.vertx.core.net.ServerSSLOptions;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * TLS as an application configures it in code, with Vert.x's own types, on the Vert.x line of this build: a PKCS12
 * key store, client authentication with a trust store (mutual TLS), a certificate rotated while a connection stays
 * open, and handshakes that count against the connection limits from accept. Key stores are made by the JDK's keytool.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TlsEmbedderTest {

  private static final String PASSWORD = "test-only";
  private static Path dir;

  @BeforeAll
  static void keyStores() throws Exception {
    dir = Files.createTempDirectory("embedder-tls");
    keyPair("server", "server.p12");
    keyPair("server", "server-renewed.p12");
    keyPair("client", "client.p12");
    trust("server", "server.p12", "client-trust.p12");
    trust("server", "server-renewed.p12", "client-trust-renewed.p12");
    trust("client", "client.p12", "server-trust.p12");
  }

  @AfterAll
  static void deleteStores() throws IOException {
    try (var files = Files.list(dir)) {
      for (Path file : files.toList()) {
        Files.delete(file);
      }
    }
    Files.delete(dir);
  }

  private static void keyPair(String alias, String store) throws Exception {
    keytool("-genkeypair", "-alias", alias, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
      "-validity", "2", "-storetype", "PKCS12", "-keystore", dir.resolve(store).toString(), "-storepass", PASSWORD);
  }

  private static void trust(String alias, String store, String trustStore) throws Exception {
    Path certificate = dir.resolve(store + ".crt");
    keytool("-exportcert", "-alias", alias, "-keystore", dir.resolve(store).toString(), "-storepass", PASSWORD, "-rfc",
      "-file", certificate.toString());
    keytool("-importcert", "-noprompt", "-alias", alias, "-file", certificate.toString(), "-storetype", "PKCS12",
      "-keystore", dir.resolve(trustStore).toString(), "-storepass", PASSWORD);
  }

  private static void keytool(String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "keytool").toString()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, "keytool: " + out);
  }

  private static PfxOptions store(String name) {
    return new PfxOptions().setPath(dir.resolve(name).toString()).setPassword(PASSWORD);
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  /** A client with its own certificate, trusting the server's {@code trustStore}. */
  private static NetClientOptions client(String trustStore) {
    return new NetClientOptions().setSsl(true).setHostnameVerificationAlgorithm("").setTrustOptions(store(trustStore))
      .setKeyCertOptions(store("client.p12"));
  }

  private static boolean served(Vertx vertx, NetClientOptions client, int port) throws Exception {
    return FrameClient.connect(vertx, client, "127.0.0.1", port, 1 << 20)
      .compose(c -> c.request(Buffer.buffer("hello")).eventually(c::close))
      .toCompletionStage().toCompletableFuture().handle((answer, error) -> error == null && answer.toString().equals("hello"))
      .get(30, TimeUnit.SECONDS);
  }

  /** What the application's own metrics system would record. */
  private static final class Events implements FrameEchoMetrics {
    final ConcurrentHashMap<HandshakeFailure, AtomicInteger> failed = new ConcurrentHashMap<>();
    final AtomicInteger rejected = new AtomicInteger();
    final CountDownLatch firstRejection = new CountDownLatch(1);
    final CountDownLatch twoFailed = new CountDownLatch(2);

    @Override
    public void handshakeFailed(HandshakeFailure why) {
      failed.computeIfAbsent(why, k -> new AtomicInteger()).incrementAndGet();
      twoFailed.countDown();
    }

    @Override
    public void connectionRejected(Rejection why) {
      rejected.incrementAndGet();
      firstRejection.countDown();
    }
  }

  @Test
  void mutualTlsWithPkcs12InCodeAndARotationThatAnOpenConnectionSurvives(Vertx vertx) throws Exception {
    FrameEchoOptions options = new FrameEchoOptions().setHost("127.0.0.1").setPort(0)
      .setNetServerOptions(new NetServerOptions().setSsl(true).setKeyCertOptions(store("server.p12"))
        .setClientAuth(ClientAuth.REQUIRED).setTrustOptions(store("server-trust.p12")));
    FrameEchoVerticle verticle = new FrameEchoVerticle(options, request -> Future.succeededFuture(request));
    await(vertx.deployVerticle(verticle));
    int port = verticle.actualPort();

    assertTrue(served(vertx, client("client-trust.p12"), port));
    assertTrue(!served(vertx, new NetClientOptions().setSsl(true).setHostnameVerificationAlgorithm("")
      .setTrustOptions(store("client-trust.p12")), port), "a client without its certificate was served");

    FrameClient open = await(FrameClient.connect(vertx, client("client-trust.p12"), "127.0.0.1", port, 1 << 20));
    assertEquals("before", await(open.request(Buffer.buffer("before"))).toString());
    await(verticle.updateTls(new ServerSSLOptions().setKeyCertOptions(store("server-renewed.p12"))
      .setClientAuth(ClientAuth.REQUIRED).setTrustOptions(store("server-trust.p12"))));
    assertEquals("across", await(open.request(Buffer.buffer("across"))).toString(), "the open connection survives");
    assertTrue(served(vertx, client("client-trust-renewed.p12"), port), "a new connection sees the new certificate");
    assertTrue(!served(vertx, client("client-trust.p12"), port), "the old certificate was still served");
    await(open.close());
  }

  @Test
  void silentTlsClientsCountAgainstTheLimitFromAccept(Vertx vertx) throws Exception {
    Events events = new Events();
    FrameEchoServer server = FrameEchoServer.create(vertx, new FrameEchoOptions().setHost("127.0.0.1").setPort(0)
        .setMaxConnections(2).setIdleGiveWayMs(0)
        .setNetServerOptions(new NetServerOptions().setSsl(true).setKeyCertOptions(store("server.p12"))))
      .metrics(events);
    int port = await(server.listen()).actualPort();
    try (Socket silent1 = new Socket(); Socket silent2 = new Socket(); Socket third = new Socket()) {
      silent1.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
      silent2.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
      third.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
      assertTrue(events.firstRejection.await(30, TimeUnit.SECONDS), "the third client was not turned away");
      assertTrue(!served(vertx, new NetClientOptions().setSsl(true).setHostnameVerificationAlgorithm("")
        .setTrustOptions(store("client-trust.p12")), port), "a TLS client got past two silent ones");
    }
    assertTrue(events.twoFailed.await(30, TimeUnit.SECONDS), "the silent clients' handshakes were not counted");
    assertTrue(served(vertx, new NetClientOptions().setSsl(true).setHostnameVerificationAlgorithm("")
      .setTrustOptions(store("client-trust.p12")), port), "served once the silent clients left");
    await(server.close());
  }

  /**
   * The TLS upgrade under frame-echo's TLS (in the package that reaches under Vert.x's API) on this Vert.x line: an upgrade whose TLS
   * handler Vert.x cannot create (a cipher suite the engine does not know; the server's start refuses one, so the upgrade
   * is called here directly) fails and closes its socket, rather than leave its client waiting for ever.
   */
  @Test
  void anUpgradeVertxCannotBeginFailsAndCloses(Vertx vertx) throws Exception {
    ServerSSLOptions unsupported = new ServerSSLOptions().setKeyCertOptions(store("server.p12"))
      .addEnabledCipherSuite("TLS_NO_SUCH_SUITE");
    io.vertx.core.Promise<Throwable> upgrade = io.vertx.core.Promise.promise();
    io.vertx.core.Promise<Void> closed = io.vertx.core.Promise.promise();
    io.vertx.core.net.NetServer server = vertx.createNetServer().connectHandler(socket -> {
      socket.closeHandler(v -> closed.tryComplete());
      io.frameecho.server.impl.netty.TlsUpgrade.upgradeToTls(socket, unsupported)
        .onComplete(ar -> upgrade.tryComplete(ar.cause()));
    });
    int port = await(server.listen(0, "127.0.0.1")).actualPort();
    try (Socket client = new Socket()) {
      client.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
      Throwable cause = await(upgrade.future());
      assertTrue(cause != null, "the upgrade succeeded");
      await(closed.future());
    } finally {
      await(server.close());
    }
  }
}
