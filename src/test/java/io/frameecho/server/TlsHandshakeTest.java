package io.frameecho.server;

import io.frameecho.client.FrameClient;
import io.frameecho.protocol.LengthField;
import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.RawConnection;
import io.frameecho.testkit.RecordingMetrics;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.SelfSignedCertificate;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * TLS handshakes count: a socket holds its slot of the connection limits from accept, through its handshake; a
 * handshake that fails gives it back and is counted by cause; nothing of the frame protocol runs before it completes.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class TlsHandshakeTest {

  private static SelfSignedCertificate certificate;

  /** The failed handshakes' summary lines, meant here, kept out of the build's output. */
  @RegisterExtension
  final LogCapture limitsLog = LogCapture.named("io.frameecho.server.impl.ConnectionLimits");

  private final List<RawConnection> raw = new ArrayList<>();
  private FrameEchoServer server;

  @BeforeAll
  static void makeCertificate() {
    certificate = SelfSignedCertificate.create("localhost");
  }

  @AfterAll
  static void deleteCertificate() {
    certificate.delete();
  }

  @AfterEach
  void closeEverything() throws Exception {
    for (RawConnection c : raw) {
      await(c.close());
    }
    if (server != null) {
      await(server.close());
    }
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static FrameEchoOptions tlsOptions() {
    return new FrameEchoOptions().setHost("127.0.0.1").setPort(0)
      .setTls(new TlsOptions().setCertPath(certificate.certificatePath()).setKeyPath(certificate.privateKeyPath()));
  }

  private int listen(Vertx vertx, FrameEchoOptions options, RecordingMetrics metrics) throws Exception {
    server = FrameEchoServer.create(vertx, options).metrics(metrics);
    return await(server.listen()).actualPort();
  }

  private RawConnection open(Vertx vertx, int port) throws Exception {
    RawConnection c = await(RawConnection.open(vertx, port));
    raw.add(c);
    return c;
  }

  private static Future<Buffer> echo(Vertx vertx, int port, String text) {
    return FrameClient.connect(vertx, TlsTest.trustingTheCertificate(certificate), "127.0.0.1", port, 1 << 20)
      .compose(client -> client.request(Buffer.buffer(text)).eventually(client::close));
  }

  /**
   * With maxConnections 2, two clients that connect and never send a ClientHello take both slots: the next client
   * (plain or TLS) is turned away. Once they leave, a TLS client is served.
   */
  @Test
  void silentTlsClientsHoldTheirSlotsFromAccept(Vertx vertx) throws Exception {
    RecordingMetrics metrics = new RecordingMetrics();
    int port = listen(vertx, tlsOptions().setMaxConnections(2).setIdleGiveWayMs(0), metrics);
    RawConnection silent1 = open(vertx, port);
    RawConnection silent2 = open(vertx, port);

    open(vertx, port);
    await(metrics.rejected(Rejection.MAX_CONNECTIONS, 1));
    assertTrue(echo(vertx, port, "turned away").toCompletionStage().toCompletableFuture()
      .handle((answer, error) -> error != null).get(30, TimeUnit.SECONDS), "a TLS client got through");
    await(metrics.rejected(Rejection.MAX_CONNECTIONS, 2));

    await(silent1.close());
    await(silent2.close());
    await(metrics.handshakesFailed(HandshakeFailure.FAILED, 2));
    assertEquals(Buffer.buffer("served"), await(echo(vertx, port, "served")));
    await(metrics.closes(1));
    assertEquals(List.of(CloseReason.CLIENT_CLOSED), metrics.closeReasons(), "only the served client became a connection");
  }

  /** The per-IP limit counts handshakes under way too. */
  @Test
  void silentTlsClientsCountPerAddress(Vertx vertx) throws Exception {
    RecordingMetrics metrics = new RecordingMetrics();
    int port = listen(vertx, tlsOptions().setMaxConnectionsPerIp(1), metrics);
    open(vertx, port);
    open(vertx, port);
    await(metrics.rejected(Rejection.MAX_CONNECTIONS_PER_IP, 1));
  }

  /**
   * Each way a handshake fails is counted by its cause, once: a client that never sends (sslHandshakeTimeout), a
   * plain-text client (whose frame is never answered), a client that refuses the certificate. None of them became a
   * connection; a good client still is served.
   */
  @Test
  void failedHandshakesAreCountedByCause(Vertx vertx) throws Exception {
    RecordingMetrics metrics = new RecordingMetrics();
    int port = listen(vertx, tlsOptions().setNetServerOptions(new JsonObject()
      .put("sslHandshakeTimeout", 300).put("sslHandshakeTimeoutUnit", "MILLISECONDS")), metrics);

    RawConnection silent = open(vertx, port);
    await(metrics.handshakesFailed(HandshakeFailure.TIMEOUT, 1));
    await(silent.closed());

    RawConnection plain = open(vertx, port);
    await(plain.write(LengthField.DEFAULT.frame(Buffer.buffer("in clear"))));
    await(metrics.handshakesFailed(HandshakeFailure.NOT_TLS, 1));
    await(plain.closed());
    assertTrue(plain.received().isEmpty());

    assertTrue(FrameClient.connect(vertx, new NetClientOptions().setSsl(true).setHostnameVerificationAlgorithm(""), "127.0.0.1", port, 1 << 20)
      .toCompletionStage().toCompletableFuture().handle((c, error) -> error != null).get(30, TimeUnit.SECONDS));
    await(metrics.handshakesFailed(HandshakeFailure.FAILED, 1));

    assertEquals(Buffer.buffer("fine"), await(echo(vertx, port, "fine")));
    assertEquals(1, metrics.handshakesFailedFor(HandshakeFailure.TIMEOUT));
    assertEquals(1, metrics.handshakesFailedFor(HandshakeFailure.NOT_TLS));
    assertEquals(1, metrics.handshakesFailedFor(HandshakeFailure.FAILED));
    assertEquals(1, metrics.requests(), "only the good client's frame was parsed");
  }

  /** Shutdown ends the handshakes under way at once, uncounted: they owe nothing. */
  @Test
  void shutdownEndsHandshakesUnderWay(Vertx vertx) throws Exception {
    RecordingMetrics metrics = new RecordingMetrics();
    int port = listen(vertx, tlsOptions(), metrics);
    RawConnection silent = open(vertx, port);
    RawConnection other = open(vertx, port);
    await(other.write(Buffer.buffer(new byte[] {0x16})));
    await(server.shutdown());
    await(silent.closed());
    await(other.closed());
    assertEquals(0, metrics.handshakesFailedFor(HandshakeFailure.FAILED) + metrics.handshakesFailedFor(HandshakeFailure.TIMEOUT));
  }
}
