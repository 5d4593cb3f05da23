package io.frameecho.server;

import io.frameecho.client.FrameClient;
import io.frameecho.testkit.TestKeyStores;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.PfxOptions;
import io.vertx.core.net.SelfSignedCertificate;
import io.vertx.core.net.ServerSSLOptions;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Certificate rotation without a restart: a connection open across a rotation keeps working, and a new connection
 * sees the new certificate (a client that trusts only the new one is served, one that trusts only the old one is not).
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class TlsRotationTest {

  private SelfSignedCertificate first;
  private SelfSignedCertificate second;
  private Path dir;
  private Path certPath;
  private Path keyPath;
  private FrameEchoServer server;

  @BeforeEach
  void files() throws Exception {
    first = SelfSignedCertificate.create("localhost");
    second = SelfSignedCertificate.create("localhost");
    dir = Files.createTempDirectory("frame-echo-rotation");
    certPath = dir.resolve("server.pem");
    keyPath = dir.resolve("server-key.pem");
    install(first);
  }

  @AfterEach
  void cleanUp() throws Exception {
    if (server != null) {
      await(server.close());
    }
    first.delete();
    second.delete();
    try (var files = Files.list(dir)) {
      for (Path file : files.toList()) {
        Files.delete(file);
      }
    }
    Files.delete(dir);
  }

  /** The certificate the server's files hold, replaced as a renewal on disk replaces it. */
  private void install(SelfSignedCertificate certificate) throws Exception {
    Files.copy(Path.of(certificate.certificatePath()), certPath, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(Path.of(certificate.privateKeyPath()), keyPath, StandardCopyOption.REPLACE_EXISTING);
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static NetClientOptions trusting(String certificatePath) {
    return new NetClientOptions().setSsl(true).setHostnameVerificationAlgorithm("")
      .setTrustOptions(new PemTrustOptions().addCertPath(certificatePath));
  }

  private static boolean connects(Vertx vertx, NetClientOptions client, int port) throws Exception {
    return FrameClient.connect(vertx, client, "127.0.0.1", port, 1 << 20)
      .compose(c -> c.request(Buffer.buffer("hello")).eventually(c::close))
      .toCompletionStage().toCompletableFuture().handle((answer, error) -> error == null).get(30, TimeUnit.SECONDS);
  }

  private int listen(Vertx vertx) throws Exception {
    server = FrameEchoServer.create(vertx, new FrameEchoOptions().setHost("127.0.0.1").setPort(0)
      .setTls(new TlsOptions().setCertPath(certPath.toString()).setKeyPath(keyPath.toString())));
    return await(server.listen()).actualPort();
  }

  @Test
  void reloadReadsTheSameFilesAgainAndOpenConnectionsSurvive(Vertx vertx) throws Exception {
    int port = listen(vertx);
    FrameClient open = await(FrameClient.connect(vertx, trusting(first.certificatePath()), "127.0.0.1", port, 1 << 20));
    try {
      assertEquals(Buffer.buffer("before"), await(open.request(Buffer.buffer("before"))));

      install(second);
      assertTrue(connects(vertx, trusting(first.certificatePath()), port), "the files alone changed nothing");
      await(server.reloadTls());

      assertEquals(Buffer.buffer("across"), await(open.request(Buffer.buffer("across"))), "the open connection survives");
      assertTrue(connects(vertx, trusting(second.certificatePath()), port), "a new connection gets the new certificate");
      assertTrue(!connects(vertx, trusting(first.certificatePath()), port), "the old certificate is no longer served");
    } finally {
      await(open.close());
    }
  }

  @Test
  void aReloadThatCannotLoadKeepsTheCertificate(Vertx vertx) throws Exception {
    int port = listen(vertx);
    Files.writeString(keyPath, "not a key\n");
    Throwable error = server.reloadTls().toCompletionStage().toCompletableFuture().handle((v, e) -> e).get(30, TimeUnit.SECONDS);
    assertTrue(error != null && error.getMessage().contains("the TLS key and certificate do not load"), String.valueOf(error));
    assertTrue(connects(vertx, trusting(first.certificatePath()), port), "the old certificate is still served");
  }

  /** In code, with Vert.x's own options: a PEM server rotated to a PKCS12 store. */
  @Test
  void updateTlsTakesVertxsOwnOptions(Vertx vertx) throws Exception {
    TestKeyStores stores = TestKeyStores.create();
    try {
      int port = listen(vertx);
      await(server.updateTls(new ServerSSLOptions()
        .setKeyCertOptions(new PfxOptions().setPath(stores.serverStore().toString()).setPassword(TestKeyStores.PASSWORD))));
      assertTrue(connects(vertx, new NetClientOptions().setSsl(true).setHostnameVerificationAlgorithm("")
        .setTrustOptions(new PfxOptions().setPath(stores.clientTrust().toString()).setPassword(TestKeyStores.PASSWORD)), port));
      assertEquals(1, await(FrameEchoServer.reloadTls(vertx)), "one TLS server in this Vert.x");
    } finally {
      stores.delete();
    }
  }

  /**
   * From the embedder's trial: a new key passed alone to a server that asks for client certificates would have
   * turned mutual TLS off without a word (Vert.x's options replace each other whole). It is refused, and the
   * server goes on asking.
   */
  @Test
  void aRotationThatWouldStopAskingForClientCertificatesIsRefused(Vertx vertx) throws Exception {
    TestKeyStores stores = TestKeyStores.create();
    try {
      PfxOptions trust = new PfxOptions().setPath(stores.serverTrust().toString()).setPassword(TestKeyStores.PASSWORD);
      server = FrameEchoServer.create(vertx, new FrameEchoOptions().setHost("127.0.0.1").setPort(0)
        .setTls(new TlsOptions().setCertPath(certPath.toString()).setKeyPath(keyPath.toString()))
        .setNetServerOptions(new NetServerOptions().setClientAuth(ClientAuth.REQUIRED).setTrustOptions(trust)));
      int port = await(server.listen()).actualPort();
      NetClientOptions anonymous = trusting(first.certificatePath());
      assertFalse(connects(vertx, anonymous, port), "a client without a certificate is refused");

      install(second);
      PemKeyCertOptions newKey = new PemKeyCertOptions().setCertPath(certPath.toString()).setKeyPath(keyPath.toString());
      Throwable refused = server.updateTls(new ServerSSLOptions().setKeyCertOptions(newKey))
        .toCompletionStage().toCompletableFuture().handle((v, e) -> e).get(30, TimeUnit.SECONDS);
      assertTrue(refused instanceof IllegalArgumentException && refused.getMessage().contains("clientAuth REQUIRED, new NONE"),
        String.valueOf(refused));
      assertFalse(connects(vertx, trusting(second.certificatePath()), port), "still asking for a client certificate");

      await(server.updateTls(new ServerSSLOptions().setKeyCertOptions(newKey).setClientAuth(ClientAuth.REQUIRED)
        .setTrustOptions(trust)));
      assertFalse(connects(vertx, trusting(second.certificatePath()), port), "rotated, and still asking");
    } finally {
      stores.delete();
    }
  }

  /** From the operator's trial: a key that is not its certificate's loaded without a word, and every handshake failed. */
  @Test
  void aKeyThatIsNotTheCertificatesIsRefusedAndTheCertificateKept(Vertx vertx) throws Exception {
    int port = listen(vertx);
    Files.copy(Path.of(second.privateKeyPath()), keyPath, StandardCopyOption.REPLACE_EXISTING);
    Throwable error = server.reloadTls().toCompletionStage().toCompletableFuture().handle((v, e) -> e).get(30, TimeUnit.SECONDS);
    assertTrue(error != null && error.getMessage().contains("does not belong to its certificate"), String.valueOf(error));
    assertTrue(connects(vertx, trusting(first.certificatePath()), port), "the old certificate is still served");
  }

  /** From an embedder's trial: a rotation to a cipher suite the JDK does not know succeeded, and every new client hung. */
  @Test
  void aRotationToACipherSuiteTheEngineDoesNotSupportIsRefusedAndTheCertificateKept(Vertx vertx) throws Exception {
    int port = listen(vertx);
    install(second);
    Throwable refused = server.updateTls(new ServerSSLOptions()
        .setKeyCertOptions(new PemKeyCertOptions().setCertPath(certPath.toString()).setKeyPath(keyPath.toString()))
        .addEnabledCipherSuite("TLS_NO_SUCH_SUITE"))
      .toCompletionStage().toCompletableFuture().handle((v, e) -> e).get(30, TimeUnit.SECONDS);
    assertTrue(refused instanceof IllegalArgumentException
      && refused.getMessage().contains("enabledCipherSuites: not supported by the JDK's TLS engine: TLS_NO_SUCH_SUITE"),
      String.valueOf(refused));
    assertTrue(connects(vertx, trusting(first.certificatePath()), port), "the old certificate is still served");
  }
}
