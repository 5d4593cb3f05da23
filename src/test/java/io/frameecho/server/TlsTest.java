package io.frameecho.server;

import io.frameecho.client.FrameClient;
import io.frameecho.protocol.LengthField;
import io.frameecho.testkit.RawConnection;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.SelfSignedCertificate;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** TLS with a self-signed certificate made at test time: nothing secret is in the repository. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 30, timeUnit = TimeUnit.SECONDS)
class TlsTest {

  private static SelfSignedCertificate certificate;

  @BeforeAll
  static void makeCertificate() {
    certificate = SelfSignedCertificate.create("localhost");
  }

  @AfterAll
  static void deleteCertificate() {
    certificate.delete();
  }

  private static Future<Integer> deployTls(Vertx vertx) {
    FrameEchoVerticle verticle = new FrameEchoVerticle();
    JsonObject config = new JsonObject().put("host", "127.0.0.1").put("port", 0)
      .put("tls", new JsonObject().put("certPath", certificate.certificatePath()).put("keyPath", certificate.privateKeyPath()));
    return vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(config)).map(id -> verticle.actualPort());
  }

  static NetClientOptions trustingTheCertificate() {
    return trustingTheCertificate(certificate);
  }

  static NetClientOptions trustingTheCertificate(SelfSignedCertificate certificate) {
    return new NetClientOptions().setSsl(true).setHostnameVerificationAlgorithm("")
      .setTrustOptions(new PemTrustOptions().addCertPath(certificate.certificatePath()));
  }

  @Test
  void clientLibraryTalksTls(Vertx vertx, VertxTestContext ctx) {
    deployTls(vertx)
      .compose(port -> FrameClient.connect(vertx, trustingTheCertificate(), "127.0.0.1", port, 1 << 20))
      .compose(client -> Future.all(client.request(Buffer.buffer("secret")), client.request(Buffer.buffer()))
        .eventually(client::close))
      .onComplete(ctx.succeeding(all -> ctx.verify(() -> {
        assertEquals(List.of(Buffer.buffer("secret"), Buffer.buffer()), all.list());
        ctx.completeNow();
      })));
  }

  /**
   * From the operator's trial: with two instances every other TLS connection hung (Vert.x gives a shared listener's
   * other instances no TLS context). The deployment is refused at start, with the reason, instead.
   */
  @Test
  void tlsWithMoreThanOneInstanceIsRefusedAtStart(Vertx vertx, VertxTestContext ctx) {
    JsonObject config = new JsonObject().put("host", "127.0.0.1").put("port", 0)
      .put("tls", new JsonObject().put("certPath", certificate.certificatePath()).put("keyPath", certificate.privateKeyPath()));
    vertx.deployVerticle(() -> new FrameEchoVerticle(), new DeploymentOptions().setConfig(config).setInstances(2))
      .onComplete(ctx.failing(e -> ctx.verify(() -> {
        assertTrue(e.getMessage().contains("TLS with more than one instance"), e.getMessage());
        ctx.completeNow();
      })));
  }

  @Test
  void clientThatDoesNotTrustTheCertificateFails(Vertx vertx, VertxTestContext ctx) {
    deployTls(vertx)
      .compose(port -> FrameClient.connect(vertx, new NetClientOptions().setSsl(true).setHostnameVerificationAlgorithm(""), "127.0.0.1", port, 1 << 20))
      .onComplete(ctx.failingThenComplete());
  }

  @Test
  void plainTextClientIsClosedAndNothingHangs(Vertx vertx, VertxTestContext ctx) {
    deployTls(vertx).compose(port -> RawConnection.open(vertx, port)
        .compose(c -> c.write(LengthField.DEFAULT.frame(Buffer.buffer("in clear"))).compose(v -> c.closed()).map(v -> c.received()))
        .compose(received -> {
          ctx.verify(() -> assertTrue(received.isEmpty()));
          // And the server still serves TLS clients.
          return FrameClient.connect(vertx, trustingTheCertificate(), "127.0.0.1", port, 1 << 20)
            .compose(client -> client.request(Buffer.buffer("after")).eventually(client::close));
        }))
      .onComplete(ctx.succeeding(answer -> ctx.verify(() -> {
        assertEquals(Buffer.buffer("after"), answer);
        ctx.completeNow();
      })));
  }

  @Test
  void commandLineClientTalksTls(Vertx vertx) throws Exception {
    int port = deployTls(vertx).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
    int status = io.frameecho.cli.TestAccess.runClient(out, err, "--port", String.valueOf(port), "--tls",
      "--trust", certificate.certificatePath(), "--no-verify-host", "hello");
    assertEquals(0, status, err.toString());
    assertEquals("len:5 data:hello\n", out.toString().replace("\r", ""));
  }

  @Test
  void missingCertificateFileFailsTheDeploymentNamingTheKey(Vertx vertx, VertxTestContext ctx) {
    JsonObject config = new JsonObject().put("port", 0)
      .put("tls", new JsonObject().put("certPath", "no-such-cert.pem").put("keyPath", certificate.privateKeyPath()));
    vertx.deployVerticle(new FrameEchoVerticle(), new DeploymentOptions().setConfig(config))
      .onComplete(ctx.failing(err -> ctx.verify(() -> {
        assertTrue(err.getMessage().contains("tls.certPath: cannot read the file no-such-cert.pem"), err.getMessage());
        ctx.completeNow();
      })));
  }
}
