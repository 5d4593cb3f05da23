package example;

import io.frameecho.server.FrameEchoVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.transport.Transport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A restart with handover on this build's Vert.x line: the successor reaches its listening channel through the
 * server Vert.x made (its fields differ between the lines), and the old server's connections move to it. Each client
 * keeps its socket: answered before, and by the successor after the old server has stopped, on the same socket.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HandoverEmbedderTest {

  private static final int CLIENTS = 10;

  @TempDir
  Path dir;

  private final List<Vertx> processes = new ArrayList<>();
  private final List<Socket> sockets = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (Socket socket : sockets) {
      socket.close();
    }
    for (Vertx vertx : processes) {
      vertx.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  private Vertx process() {
    Vertx vertx = Vertx.builder().withTransport(Transport.EPOLL).build();
    processes.add(vertx);
    return vertx;
  }

  private static int deploy(Vertx vertx, int port, Path handoverSocket) throws Exception {
    FrameEchoVerticle verticle = new FrameEchoVerticle();
    JsonObject config = new JsonObject().put("host", "127.0.0.1").put("port", port)
      .put("handoverSocket", handoverSocket.toString())
      .put("netServerOptions", new JsonObject().put("reusePort", true));
    vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(config))
      .toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    return verticle.actualPort();
  }

  private static String echo(Socket socket, String request) throws IOException {
    byte[] payload = request.getBytes(StandardCharsets.UTF_8);
    OutputStream out = socket.getOutputStream();
    out.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(payload.length).array());
    out.write(payload);
    out.flush();
    DataInputStream in = new DataInputStream(socket.getInputStream());
    byte[] header = new byte[4];
    in.readFully(header);
    byte[] body = new byte[ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN).getInt()];
    in.readFully(body);
    return new String(body, StandardCharsets.UTF_8);
  }

  @Test
  void theSuccessorAdoptsTheOldServersConnections() throws Exception {
    assertTrue(Transport.EPOLL.available(), "epoll: " + Transport.EPOLL.unavailabilityCause());
    Path handoverSocket = dir.resolve("handover.sock");
    Vertx old = process();
    int port = deploy(old, 0, handoverSocket);
    for (int i = 0; i < CLIENTS; i++) {
      Socket socket = new Socket("127.0.0.1", port);
      socket.setSoTimeout(20_000);
      sockets.add(socket);
      assertEquals("before " + i, echo(socket, "before " + i));
    }
    deploy(process(), port, handoverSocket);
    old.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    processes.remove(old);
    for (int i = 0; i < CLIENTS; i++) {
      // Read to its end, a closed connection would fail here: EOFException, or a reset.
      assertEquals("after " + i, echo(sockets.get(i), "after " + i));
    }
  }
}
