package example;

import io.frameecho.server.FrameEchoVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

/**
 * The PROXY protocol on this build's Vert.x line, with netty-codec-haproxy added by the application: frame-echo places
 * Netty's decoder in front of Vert.x's handler on an accepted socket, and a v1 and a v2 header are read before the
 * frames that follow them in the same write.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProxyEmbedderTest {

  private Vertx vertx;
  private int port;

  @BeforeEach
  void deploy() throws Exception {
    vertx = Vertx.vertx();
    FrameEchoVerticle verticle = new FrameEchoVerticle();
    vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(new JsonObject().put("host", "127.0.0.1").put("port", 0)
      .put("netServerOptions", new JsonObject().put("useProxyProtocol", true)).put("proxyTrustedPeers", "127.0.0.1")))
      .toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    port = verticle.actualPort();
  }

  @AfterEach
  void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }

  private byte[] echo(byte[] header, String message) throws IOException {
    byte[] payload = message.getBytes(StandardCharsets.UTF_8);
    ByteBuffer out = ByteBuffer.allocate(header.length + 4 + payload.length).order(ByteOrder.LITTLE_ENDIAN);
    out.put(header).putInt(payload.length).put(payload);
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(20_000);
      OutputStream o = socket.getOutputStream();
      o.write(out.array());
      DataInputStream in = new DataInputStream(socket.getInputStream());
      byte[] length = new byte[4];
      in.readFully(length);
      byte[] echoed = new byte[ByteBuffer.wrap(length).order(ByteOrder.LITTLE_ENDIAN).getInt()];
      in.readFully(echoed);
      return echoed;
    }
  }

  @Test
  void v1AndV2HeadersAreReadBeforeTheFrames() throws Exception {
    byte[] v1 = "PROXY TCP4 203.0.113.7 127.0.0.1 40000 1234\r\n".getBytes(StandardCharsets.US_ASCII);
    assertArrayEquals("through v1".getBytes(StandardCharsets.UTF_8), echo(v1, "through v1"));
    byte[] v2 = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A, 0x21, 0x11, 0x00, 0x0C,
      (byte) 198, 51, 100, 9, 127, 0, 0, 1, (byte) 0x9C, 0x40, 0x04, (byte) 0xD2};
    assertArrayEquals("through v2".getBytes(StandardCharsets.UTF_8), echo(v2, "through v2"));
  }
}
