package io.frameecho.server;

import io.frameecho.protocol.LengthField;
import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.RawConnection;
import io.frameecho.testkit.RecordingMetrics;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The PROXY protocol (v1 and v2) as HAProxy's {@code accept-proxy} reads it: a header before anything else, whose
 * address is the client's for {@code maxConnectionsPerIp}; a socket waiting for it holds a slot; a connection without
 * a valid header, late, or from a peer outside {@code proxyTrustedPeers} is closed and counted, and the server goes on.
 * Headers are written by hand here; {@code src/it/haproxy.sh} puts a real HAProxy in front.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 30, timeUnit = TimeUnit.SECONDS)
class ProxyProtocolTest {

  @RegisterExtension
  final LogCapture limitsLog = LogCapture.of("io.frameecho.server.impl.ConnectionLimits");

  private final RecordingMetrics metrics = new RecordingMetrics();

  private Future<Integer> deploy(Vertx vertx, JsonObject config) {
    FrameEchoVerticle verticle = new FrameEchoVerticle().metrics(metrics);
    JsonObject net = new JsonObject().put("useProxyProtocol", true);
    JsonObject c = new JsonObject().put("host", "127.0.0.1").put("port", 0).put("netServerOptions", net).mergeIn(config, true);
    return vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(c)).map(id -> verticle.actualPort());
  }

  static Buffer v1(String source) {
    return Buffer.buffer("PROXY TCP4 " + source + " 127.0.0.1 40000 1234\r\n", StandardCharsets.US_ASCII.name());
  }

  /** A v2 header (binary): PROXY command, TCP over IPv4, {@code source}:40000 to 127.0.0.1:1234. */
  static Buffer v2(int[] source) {
    Buffer b = Buffer.buffer(new byte[] {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A});
    b.appendByte((byte) 0x21).appendByte((byte) 0x11).appendUnsignedShort(12);
    for (int octet : source) {
      b.appendByte((byte) octet);
    }
    return b.appendBytes(new byte[] {127, 0, 0, 1}).appendUnsignedShort(40000).appendUnsignedShort(1234);
  }

  /** Opens a connection, sends {@code header} then one frame; completes with whether it was echoed. */
  private static Future<Boolean> served(Vertx vertx, int port, Buffer header, List<RawConnection> opened) {
    return RawConnection.open(vertx, port).compose(c -> {
      opened.add(c);
      // 21 bytes: without a header, enough for the decoder to tell it is none (it needs 13 to decide).
      Buffer frame = LengthField.DEFAULT.frame(Buffer.buffer("hello, frame-echo"));
      return c.write(header.copy().appendBuffer(frame)).transform(ar -> c.expectFrames(1))
        .map(frames -> frames.get(0).equals(Buffer.buffer("hello, frame-echo"))).otherwise(false);
    });
  }

  private static Future<Void> closeAll(List<RawConnection> opened) {
    return Future.all(opened.stream().map(RawConnection::close).toList()).mapEmpty();
  }

  @Test
  void v1AndV2ClientsAreEchoedAndThePerIpLimitCountsTheirAddresses(Vertx vertx, VertxTestContext ctx) {
    List<RawConnection> opened = new java.util.ArrayList<>();
    deploy(vertx, new JsonObject().put("maxConnectionsPerIp", 1)).compose(port ->
      served(vertx, port, v1("203.0.113.7"), opened).compose(first -> served(vertx, port, v2(new int[] {198, 51, 100, 9}), opened)
        .compose(second -> served(vertx, port, v1("192.0.2.1"), opened)
          .compose(third -> served(vertx, port, v2(new int[] {203, 0, 113, 7}), opened).map(fourth -> {
            ctx.verify(() -> {
              // All four come from 127.0.0.1: only the carried addresses tell them apart.
              assertEquals(List.of(true, true, true, false), List.of(first, second, third, fourth),
                "v1, v2, v1 from three addresses served; a second from 203.0.113.7 is over maxConnectionsPerIp");
              assertEquals(1, metrics.rejectedFor(Rejection.MAX_CONNECTIONS_PER_IP));
            });
            return null;
          })))))
      .eventually(() -> closeAll(opened))
      .onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void aConnectionWithoutAHeaderIsClosedAndCountedAndTheServerGoesOn(Vertx vertx, VertxTestContext ctx) {
    List<RawConnection> opened = new java.util.ArrayList<>();
    deploy(vertx, new JsonObject()).compose(port -> served(vertx, port, Buffer.buffer(), opened)
        .compose(bare -> metrics.handshakesFailed(HandshakeFailure.PROXY_INVALID, 1).compose(v -> {
          ctx.verify(() -> assertEquals(false, bare, "a frame where the header should be is not answered"));
          return served(vertx, port, v1("203.0.113.7"), opened);
        })))
      .onComplete(ctx.succeeding(next -> ctx.verify(() -> {
        assertTrue(next, "the next client, with its header, is served");
        assertEquals(0, metrics.closeReasons().size(), "the header-less one never became a connection");
        closeAll(opened).onComplete(ctx.succeedingThenComplete());
      })));
  }

  /** A socket waiting for its header holds its slot from accept, and is closed once proxyProtocolTimeout has passed. */
  @Test
  void aSilentSocketHoldsASlotUntilItsHeaderTimesOut(Vertx vertx, VertxTestContext ctx) {
    List<RawConnection> opened = new java.util.ArrayList<>();
    JsonObject config = new JsonObject().put("maxConnections", 1).put("idleGiveWayMs", 0)
      .put("netServerOptions", new JsonObject().put("useProxyProtocol", true).put("proxyProtocolTimeout", 500)
        .put("proxyProtocolTimeoutUnit", "MILLISECONDS"));
    deploy(vertx, config).compose(port -> RawConnection.open(vertx, port).compose(silent -> {
      opened.add(silent);
      return served(vertx, port, v1("203.0.113.7"), opened).compose(whileWaiting -> {
        ctx.verify(() -> {
          assertEquals(false, whileWaiting, "the silent socket holds the only slot");
          assertEquals(1, metrics.rejectedFor(Rejection.MAX_CONNECTIONS));
        });
        return silent.closed().compose(v -> metrics.handshakesFailed(HandshakeFailure.PROXY_TIMEOUT, 1));
      }).compose(v -> served(vertx, port, v1("203.0.113.7"), opened));
    })).onComplete(ctx.succeeding(after -> ctx.verify(() -> {
      assertTrue(after, "the slot is free again");
      closeAll(opened).onComplete(ctx.succeedingThenComplete());
    })));
  }

  @Test
  void aPeerOutsideTheTrustedOnesIsClosedBeforeItsHeader(Vertx vertx, VertxTestContext ctx) {
    List<RawConnection> opened = new java.util.ArrayList<>();
    deploy(vertx, new JsonObject().put("proxyTrustedPeers", "10.0.0.0/8, 192.168.0.0/16")).compose(port ->
        served(vertx, port, v1("203.0.113.7"), opened))
      .compose(served -> metrics.handshakesFailed(HandshakeFailure.PROXY_UNTRUSTED, 1).map(served))
      .compose(served -> {
        ctx.verify(() -> assertEquals(false, served, "127.0.0.1 is not a trusted peer"));
        // Trusted, the same client is served.
        return deploy(vertx, new JsonObject().put("proxyTrustedPeers", "127.0.0.0/8,::1"))
          .compose(port -> served(vertx, port, v1("203.0.113.7"), opened));
      })
      .eventually(() -> closeAll(opened))
      .onComplete(ctx.succeeding(served -> ctx.verify(() -> {
        assertTrue(served);
        ctx.completeNow();
      })));
  }

  @Test
  void settingsThatWouldBeIgnoredOrCannotWorkAreRefused() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> new FrameEchoOptions(new JsonObject()
      .put("proxyTrustedPeers", "10.0.0.0/8"))).getMessage().startsWith("proxyTrustedPeers: set with netServerOptions.useProxyProtocol false"));
    assertEquals("proxyTrustedPeers: \"example.com\" is not an IP address or a CIDR range (10.0.0.0/8, 2001:db8::/32)",
      assertThrows(IllegalArgumentException.class, () -> new FrameEchoOptions().setProxyTrustedPeers("example.com")).getMessage());
    assertEquals("proxyTrustedPeers: \"10.0.0.0/33\": the prefix length must be 0 to 32",
      assertThrows(IllegalArgumentException.class, () -> new FrameEchoOptions().setProxyTrustedPeers("10.0.0.0/33")).getMessage());
    assertTrue(assertThrows(IllegalArgumentException.class, () -> new FrameEchoOptions(new JsonObject()
        .put("tls", new JsonObject().put("certPath", "c.pem").put("keyPath", "k.pem"))
        .put("netServerOptions", new JsonObject().put("useProxyProtocol", true)))).getMessage()
      .startsWith("netServerOptions.useProxyProtocol: not supported with TLS served by frame-echo"));
  }
}
