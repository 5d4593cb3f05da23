package example;

import io.frameecho.server.FrameEchoVerticle;
import io.frameecho.server.RequestHandler;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.TCPSSLOptions;
import io.vertx.core.transport.Transport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The application on epoll, the transport a Linux deployment runs on, on this build's Vert.x line and its Netty:
 * what frame-echo changes in an epoll channel's interest set holds here too. A socket whose reading the server paused is
 * not read, even once its client has shut down its sending side; then every response arrives, and the end. Each
 * accepted socket carries keep-alive's times, which the listener gives on epoll.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EpollTest {

  private final List<Promise<Buffer>> held = new CopyOnWriteArrayList<>();
  private final CompletableFuture<Void> firstHeld = new CompletableFuture<>();
  private final List<Socket> sockets = new ArrayList<>();
  private Vertx vertx;
  private int port;

  @BeforeEach
  void deploy() throws Exception {
    assertTrue(Transport.EPOLL.available(), "epoll: " + Transport.EPOLL.unavailabilityCause());
    // One event loop: a second client's echo then means the loop has polled every socket since the first one's FIN.
    vertx = Vertx.builder().with(new VertxOptions().setEventLoopPoolSize(1)).withTransport(Transport.EPOLL).build();
    // "hold" is answered when the test says so, anything else at once; one answer in flight per connection.
    RequestHandler handler = request -> {
      if (!request.toString().equals("hold")) {
        return Future.succeededFuture(request);
      }
      Promise<Buffer> answer = Promise.promise();
      held.add(answer);
      firstHeld.complete(null);
      return answer.future();
    };
    FrameEchoVerticle verticle = new FrameEchoVerticle(handler);
    vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(new JsonObject().put("host", "127.0.0.1")
      .put("port", 0).put("handler", new JsonObject().put("maxInFlight", 1))))
      .toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    port = verticle.actualPort();
  }

  @AfterEach
  void close() throws Exception {
    for (Socket s : sockets) {
      s.close();
    }
    vertx.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }

  private Socket connect() throws IOException {
    Socket s = new Socket("127.0.0.1", port);
    s.setSoTimeout(20_000);
    sockets.add(s);
    return s;
  }

  private static byte[] frame(byte[] payload) {
    return ByteBuffer.allocate(4 + payload.length).order(ByteOrder.LITTLE_ENDIAN).putInt(payload.length).put(payload).array();
  }

  /** Bytes the kernel holds for the server's end of {@code client} that the server has not read (Linux's /proc/net/tcp and tcp6). */
  private static long unreadByTheServer(Socket client) throws IOException {
    String serverEnd = String.format(":%04X", client.getPort());
    String clientEnd = String.format(":%04X", client.getLocalPort());
    // IPv4 sockets, and IPv6 ones with IPv4-mapped addresses (the JDK's and Netty's sockets are dual-stack).
    for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      for (String line : Files.readAllLines(Path.of(table))) {
        String[] f = line.trim().split("\\s+");
        if (f[1].endsWith(serverEnd) && f[2].endsWith(clientEnd)) {
          return Long.parseLong(f[4].substring(f[4].indexOf(':') + 1), 16);
        }
      }
    }
    throw new AssertionError("the server's end of the connection is not in /proc/net/tcp");
  }

  @Test
  void aPausedClientThatShutsDownItsSendingSideIsNotReadUntilTheServerReadsAgain() throws Exception {
    Socket client = connect();
    client.getOutputStream().write(frame("hold".getBytes()));
    // Its one answer in flight is awaited: the server stops reading this connection.
    firstHeld.get(20, TimeUnit.SECONDS);
    // 64 frames of 512 bytes, within the kernel's buffers, then the end of its input.
    ByteArrayOutputStream more = new ByteArrayOutputStream();
    List<byte[]> expected = new ArrayList<>(List.of("hold".getBytes()));
    for (int i = 0; i < 64; i++) {
      byte[] payload = new byte[512];
      payload[0] = (byte) i;
      more.write(frame(payload));
      expected.add(payload);
    }
    client.getOutputStream().write(more.toByteArray());
    client.shutdownOutput();

    Socket marker = connect();
    marker.getOutputStream().write(frame("hello".getBytes()));
    byte[] echo = new byte[4 + 5];
    new DataInputStream(marker.getInputStream()).readFully(echo);
    assertArrayEquals(frame("hello".getBytes()), echo);

    // All of it, and the FIN (which counts as one in the kernel's sequence numbers).
    assertEquals(more.size() + 1, unreadByTheServer(client), "bytes the server left in the kernel while paused");

    vertx.runOnContext(v -> held.get(0).complete(Buffer.buffer("hold")));
    DataInputStream in = new DataInputStream(client.getInputStream());
    for (byte[] payload : expected) {
      byte[] head = new byte[4];
      in.readFully(head);
      byte[] got = new byte[ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN).getInt()];
      in.readFully(got);
      assertArrayEquals(payload, got);
    }
    assertEquals(-1, in.read(), "the server ends the connection after the last answer");
  }

  /** The server's end of {@code client} in Linux's /proc/net/tcp or tcp6, split into its fields. */
  private static String[] serverEnd(Socket client) throws IOException {
    String serverEnd = String.format(":%04X", client.getPort());
    String clientEnd = String.format(":%04X", client.getLocalPort());
    for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      for (String line : Files.readAllLines(Path.of(table))) {
        String[] f = line.trim().split("\\s+");
        if (f[1].endsWith(serverEnd) && f[2].endsWith(clientEnd)) {
          return f;
        }
      }
    }
    throw new AssertionError("the server's end of the connection is not in /proc/net/tcp");
  }

  /**
   * A burst of clients at start, then more: each server socket's keep-alive timer runs, and on the lines with keep-alive
   * times (5.1 on; 5.0 has none and keeps the kernel's) fires within keepAliveSeconds (300 by default), in the kernel's
   * clock ticks (USER_HZ, 100 a second).
   */
  @Test
  void everyAcceptedSocketProbesAfterKeepAliveSeconds() throws Exception {
    boolean lineHasTimes = Arrays.stream(TCPSSLOptions.class.getMethods())
      .anyMatch(m -> m.getName().equals("setTcpKeepAliveIdleSeconds"));
    List<Socket> clients = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      clients.add(connect());
    }
    for (Socket client : clients) {
      client.getOutputStream().write(frame("hello".getBytes()));
      byte[] echo = new byte[4 + 5];
      new DataInputStream(client.getInputStream()).readFully(echo);
      assertArrayEquals(frame("hello".getBytes()), echo);
    }
    for (Socket client : clients) {
      String[] timer = serverEnd(client)[5].split(":");
      assertEquals("02", timer[0], "the keep-alive timer runs");
      long ticks = Long.parseLong(timer[1], 16);
      if (lineHasTimes) {
        assertTrue(ticks <= 300 * 100 && ticks > 200 * 100, "fires within keepAliveSeconds: " + ticks + " ticks");
      }
    }
  }
}
