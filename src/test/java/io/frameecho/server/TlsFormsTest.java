package io.frameecho.server;

import io.frameecho.client.FrameClient;
import io.frameecho.testkit.RecordingMetrics;
import io.frameecho.testkit.TestKeyStores;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.PfxOptions;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every TLS form Vert.x has, configured with Vert.x's own types in code or their JSON names in a configuration:
 * PKCS12 and JKS key stores, client authentication with a trust store (mutual TLS), protocol versions.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class TlsFormsTest {

  private static TestKeyStores stores;

  @BeforeAll
  static void makeStores() throws Exception {
    stores = TestKeyStores.create();
  }

  @AfterAll
  static void deleteStores() throws Exception {
    stores.delete();
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static PfxOptions pfx(java.nio.file.Path path) {
    return new PfxOptions().setPath(path.toString()).setPassword(TestKeyStores.PASSWORD);
  }

  private static NetClientOptions client() {
    return new NetClientOptions().setSsl(true).setHostnameVerificationAlgorithm("").setTrustOptions(pfx(stores.clientTrust()));
  }

  private static Future<Buffer> echo(Vertx vertx, NetClientOptions client, int port, String text) {
    return FrameClient.connect(vertx, client, "127.0.0.1", port, 1 << 20)
      .compose(c -> c.request(Buffer.buffer(text)).eventually(c::close));
  }

  private static boolean fails(Future<?> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().handle((v, error) -> error != null).get(30, TimeUnit.SECONDS);
  }

  private static int deploy(Vertx vertx, FrameEchoVerticle verticle) throws Exception {
    await(vertx.deployVerticle(verticle));
    return verticle.actualPort();
  }

  /** In code: a PKCS12 key store, and the verticle given its options and its application. */
  @Test
  void pkcs12InCodeWithAnApplication(Vertx vertx) throws Exception {
    FrameEchoOptions options = new FrameEchoOptions().setHost("127.0.0.1").setPort(0)
      .setNetServerOptions(new NetServerOptions().setSsl(true).setKeyCertOptions(pfx(stores.serverStore())));
    int port = deploy(vertx, new FrameEchoVerticle(options, request -> Future.succeededFuture(
      Buffer.buffer(request.toString().toUpperCase(java.util.Locale.ROOT)))));
    assertEquals(Buffer.buffer("PKCS12"), await(echo(vertx, client(), port, "pkcs12")));
  }

  /** In a configuration: a JKS key store under Vert.x's JSON name. */
  @Test
  void jksFromTheConfiguration(Vertx vertx) throws Exception {
    JsonObject config = new JsonObject().put("host", "127.0.0.1").put("port", 0).put("netServerOptions", new JsonObject()
      .put("ssl", true).put("keyStoreOptions", new JsonObject().put("path", stores.serverJks().toString()).put("password", TestKeyStores.PASSWORD)));
    FrameEchoVerticle verticle = new FrameEchoVerticle();
    await(vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(config)));
    // The JKS pair is another key pair than the PKCS12 one the client trusts: trust it for this test.
    NetClientOptions trustingJks = new NetClientOptions().setSsl(true).setHostnameVerificationAlgorithm("")
      .setTrustOptions(new io.vertx.core.net.JksOptions().setPath(stores.serverJks().toString()).setPassword(TestKeyStores.PASSWORD));
    assertEquals(Buffer.buffer("jks"), await(echo(vertx, trustingJks, verticle.actualPort(), "jks")));
  }

  /** Mutual TLS: clientAuth REQUIRED with a trust store; a client without its certificate fails its handshake, counted. */
  @Test
  void mutualTls(Vertx vertx) throws Exception {
    RecordingMetrics metrics = new RecordingMetrics();
    FrameEchoOptions options = new FrameEchoOptions().setHost("127.0.0.1").setPort(0)
      .setNetServerOptions(new NetServerOptions().setSsl(true).setKeyCertOptions(pfx(stores.serverStore()))
        .setClientAuth(ClientAuth.REQUIRED).setTrustOptions(pfx(stores.serverTrust())));
    FrameEchoServer server = FrameEchoServer.create(vertx, options).metrics(metrics);
    int port = await(server.listen()).actualPort();
    try {
      assertEquals(Buffer.buffer("mine"), await(echo(vertx, client().setKeyCertOptions(pfx(stores.clientStore())), port, "mine")));
      assertTrue(fails(echo(vertx, client(), port, "anonymous")), "a client without a certificate was served");
      await(metrics.handshakesFailed(HandshakeFailure.FAILED, 1));
    } finally {
      await(server.close());
    }
  }

  /** Protocol versions: a server that takes TLS 1.3 only refuses a TLS 1.2 client. */
  @Test
  void protocolVersions(Vertx vertx) throws Exception {
    FrameEchoOptions options = new FrameEchoOptions().setHost("127.0.0.1").setPort(0)
      .setNetServerOptions(new NetServerOptions(new JsonObject().put("ssl", true)
        .put("pfxKeyCertOptions", new JsonObject().put("path", stores.serverStore().toString()).put("password", TestKeyStores.PASSWORD))
        .put("enabledSecureTransportProtocols", new io.vertx.core.json.JsonArray().add("TLSv1.3"))));
    int port = deploy(vertx, new FrameEchoVerticle(options));
    assertTrue(fails(echo(vertx, client().setEnabledSecureTransportProtocols(Set.of("TLSv1.2")), port, "old")));
    assertEquals(Buffer.buffer("new"), await(echo(vertx, client().setEnabledSecureTransportProtocols(Set.of("TLSv1.3")), port, "new")));
  }

  /** A key store whose password is wrong fails the start with the reason, before anything is bound. */
  @Test
  void aWrongPasswordFailsTheStart(Vertx vertx) throws Exception {
    FrameEchoOptions options = new FrameEchoOptions().setHost("127.0.0.1").setPort(0)
      .setNetServerOptions(new NetServerOptions().setSsl(true)
        .setKeyCertOptions(new PfxOptions().setPath(stores.serverStore().toString()).setPassword("wrong")));
    Throwable error = vertx.deployVerticle(new FrameEchoVerticle(options)).toCompletionStage().toCompletableFuture()
      .handle((id, e) -> e).get(30, TimeUnit.SECONDS);
    assertTrue(error != null && error.getMessage().contains("the TLS key and certificate do not load from key store "
      + stores.serverStore() + ": wrong password for " + stores.serverStore() + "? (the JDK says: "), String.valueOf(error));
  }

  /** From an embedder's trial: no key material named a JSON name Vert.x does not read; a missing file said its path twice. */
  @Test
  void keyMaterialProblemsAreSaidOnceWithVertxsNames(Vertx vertx) throws Exception {
    FrameEchoServer server = FrameEchoServer.create(vertx, new FrameEchoOptions().setHost("127.0.0.1").setPort(0)
      .setNetServerOptions(new NetServerOptions().setSsl(true).setKeyCertOptions(pfx(stores.serverStore()))));
    await(server.listen());
    Throwable none;
    try {
      none = server.updateTls(new io.vertx.core.net.ServerSSLOptions()).toCompletionStage().toCompletableFuture()
        .handle((v, e) -> e).get(30, TimeUnit.SECONDS);
    } finally {
      await(server.close());
    }
    assertTrue(none != null && none.getMessage().contains("pemKeyCertOptions, pfxKeyCertOptions or keyStoreOptions")
      && !none.getMessage().contains("jks"), String.valueOf(none));
    String missing = stores.serverStore() + ".missing";
    FrameEchoOptions options = new FrameEchoOptions().setHost("127.0.0.1").setPort(0)
      .setNetServerOptions(new NetServerOptions().setSsl(true).setKeyCertOptions(pfx(stores.serverStore()).setPath(missing)));
    Throwable error = FrameEchoServer.checkTls(vertx, options).toCompletionStage().toCompletableFuture()
      .handle((v, e) -> e).get(30, TimeUnit.SECONDS);
    assertEquals("cannot read the TLS file " + missing + ": no such file", error == null ? null : error.getMessage());
  }

  private static Throwable startFailure(Vertx vertx, NetServerOptions net) throws Exception {
    FrameEchoServer server = FrameEchoServer.create(vertx, new FrameEchoOptions().setHost("127.0.0.1").setPort(0)
      .setNetServerOptions(net.setSsl(true).setKeyCertOptions(pfx(stores.serverStore()))));
    Throwable error = server.listen().toCompletionStage().toCompletableFuture().handle((s, e) -> e).get(30, TimeUnit.SECONDS);
    if (error == null) {
      await(server.close());
    }
    return error;
  }

  /**
   * From an embedder's trial: a cipher suite the JDK does not know passed, the server said it listened with TLS, and
   * every client then waited for ever; a protocol it does not know, or only protocols it has disabled, and every
   * handshake failed. Each is refused at start, named.
   */
  @Test
  void cipherSuitesAndProtocolsTheEngineDoesNotSupportFailTheStart(Vertx vertx) throws Exception {
    Throwable suite = startFailure(vertx, new NetServerOptions().addEnabledCipherSuite("TLS_AES_128_GCM_SHA256")
      .addEnabledCipherSuite("TLS_NO_SUCH_SUITE"));
    assertTrue(suite instanceof IllegalArgumentException && suite.getMessage().equals("invalid frame-echo configuration: "
      + "netServerOptions.enabledCipherSuites: not supported by the JDK's TLS engine: TLS_NO_SUCH_SUITE"), String.valueOf(suite));
    Throwable protocol = startFailure(vertx, new NetServerOptions().setEnabledSecureTransportProtocols(Set.of("TLSv1.3", "TLSv1.9")));
    assertTrue(protocol != null && protocol.getMessage().startsWith("invalid frame-echo configuration: "
      + "netServerOptions.enabledSecureTransportProtocols: not supported by the JDK's TLS engine: TLSv1.9 (it supports "),
      String.valueOf(protocol));
    Throwable disabled = startFailure(vertx, new NetServerOptions().setEnabledSecureTransportProtocols(Set.of("SSLv3")));
    assertTrue(disabled != null && disabled.getMessage().startsWith("invalid frame-echo configuration: "
      + "netServerOptions.enabledSecureTransportProtocols: no protocol a handshake could use: SSLv3 is disabled by the "
      + "JDK's security property jdk.tls.disabledAlgorithms"), String.valueOf(disabled));
    // Disabled beside usable, and suites the JDK supports: a handshake can agree, so the start goes on as before.
    assertEquals(null, startFailure(vertx, new NetServerOptions().setEnabledSecureTransportProtocols(Set.of("SSLv3", "TLSv1.3"))
      .addEnabledCipherSuite("TLS_AES_128_GCM_SHA256")));
  }
}
