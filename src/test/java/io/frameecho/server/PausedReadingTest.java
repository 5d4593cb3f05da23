package io.frameecho.server;

import io.frameecho.protocol.Frames;
import io.frameecho.testkit.DeploymentLimits;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.transport.Transport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A pause in reading holds on every transport, with real sockets: a client that shuts down its sending side while
 * the server has paused reading it is not read until reading resumes, and is then answered in full. On epoll, Netty
 * reads such a socket to its end, paused or not, unless the server takes EPOLLRDHUP out of its interest set: this
 * test runs there when epoll is available, as the jar does.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PausedReadingTest {

  private static final byte[] HOLD = Frames.frame(Buffer.buffer("hold")).getBytes();
  private static final byte[] HELLO = Frames.frame(Buffer.buffer("hello")).getBytes();

  private final List<Promise<Buffer>> held = new CopyOnWriteArrayList<>();
  private final CompletableFuture<Void> firstHeld = new CompletableFuture<>();
  private final List<Socket> sockets = new ArrayList<>();
  private Vertx vertx;
  private String deploymentId;

  @BeforeEach
  void start() {
    // One event loop: a marker client's echo then means that loop has polled every socket since the first client's FIN.
    vertx = Vertx.builder().with(new VertxOptions().setEventLoopPoolSize(1))
      .withTransport(Transport.EPOLL.available() ? Transport.EPOLL : Transport.NIO).build();
  }

  @AfterEach
  void stop() throws Exception {
    for (Socket s : sockets) {
      s.close();
    }
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** "hold" waits for the test to answer it; anything else is echoed at once. One answer in flight per connection. */
  private int deploy() throws Exception {
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
    JsonObject config = new JsonObject().put("host", "127.0.0.1").put("port", 0)
      .put("handler", new JsonObject().put("maxInFlight", 1));
    deploymentId = vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(config)).toCompletionStage()
      .toCompletableFuture().get(10, TimeUnit.SECONDS);
    return verticle.actualPort();
  }

  private Socket connect(int port) throws IOException {
    Socket s = new Socket("127.0.0.1", port);
    s.setSoTimeout(10_000);
    sockets.add(s);
    return s;
  }

  /** Bytes the server holds (read and not yet answered), read on its one event loop once what it is doing now is done. */
  private long heldBytes() throws Exception {
    Promise<Long> used = Promise.promise();
    vertx.getOrCreateContext().runOnContext(v -> used.complete(DeploymentLimits.of(vertx, deploymentId).budget().used()));
    return used.future().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  void aClientThatHalfClosesWhileReadingIsPausedIsReadOnlyOnceItResumesAndIsAnsweredInFull() throws Exception {
    int port = deploy();
    Socket client = connect(port);
    client.getOutputStream().write(HOLD);
    // Its one answer in flight is taken: the server stops reading this connection.
    firstHeld.get(10, TimeUnit.SECONDS);
    // 64 frames of 512 bytes (33 KiB, within the kernel's receive buffer), then the end of its input.
    ByteArrayOutputStream more = new ByteArrayOutputStream();
    List<byte[]> expected = new ArrayList<>();
    expected.add("hold".getBytes());
    for (int i = 0; i < 64; i++) {
      byte[] payload = new byte[512];
      payload[0] = (byte) i;
      more.write(Frames.frame(Buffer.buffer(payload)).getBytes());
      expected.add(payload);
    }
    client.getOutputStream().write(more.toByteArray());
    client.shutdownOutput();

    // A second client on the same event loop is answered: the loop has polled its sockets since the FIN arrived.
    Socket marker = connect(port);
    marker.getOutputStream().write(HELLO);
    byte[] echo = new byte[HELLO.length];
    new DataInputStream(marker.getInputStream()).readFully(echo);
    assertArrayEquals(HELLO, echo);

    // Only the held request counts as held; the 33 KiB after it still wait in the kernel, unread.
    assertEquals(HOLD.length, heldBytes(),
      "bytes read from a connection whose reading was paused");

    // Answered: reading resumes, every frame sent before the end is answered in order, then the server closes.
    vertx.runOnContext(v -> held.get(0).complete(Buffer.buffer("hold")));
    DataInputStream in = new DataInputStream(client.getInputStream());
    for (byte[] payload : expected) {
      int length = Integer.reverseBytes(in.readInt());
      byte[] got = new byte[length];
      in.readFully(got);
      assertArrayEquals(payload, got);
    }
    assertEquals(-1, in.read(), "the server ends the connection after the last answer");
  }
}
