package io.frameecho.server;

import ch.qos.logback.classic.Level;
import io.frameecho.server.impl.shared.ConnectionLimits;
import io.frameecho.testkit.DeploymentLimits;
import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.RecordingMetrics;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every close the server decides after answering delivers the responses it queued, then a FIN, even while
 * the client keeps sending: the close lingers, reading and discarding, instead of resetting the
 * connection (a reset makes the client's kernel throw away responses not read yet). Clients are blocking
 * sockets on the test thread and on plain threads, never on an event loop; a reset shows up on them as a
 * {@code SocketException}.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class LingeringCloseTest {

  private static final int SOCKET_TIMEOUT_MS = 15_000;

  /** The shutdown line, the one place that says how many connections were drained and how many cut. */
  @RegisterExtension
  final LogCapture serverLog = LogCapture.of(FrameEchoServer.class);
  /** The closes these tests cause on purpose log WARN and INFO lines; captured, they stay off the console. */
  @RegisterExtension
  final LogCapture connectionLog = LogCapture.of("io.frameecho.server.impl.Connection");
  /** What the server decided: close reasons, as events. */
  private final RecordingMetrics metrics = new RecordingMetrics();
  private String deploymentId;

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private int deploy(Vertx vertx, JsonObject config, RequestHandler handler) throws Exception {
    FrameEchoVerticle verticle = (handler == null ? new FrameEchoVerticle() : new FrameEchoVerticle(handler)).metrics(metrics);
    deploymentId = await(vertx.deployVerticle(verticle, new DeploymentOptions()
      .setConfig(new JsonObject().put("host", "127.0.0.1").put("port", 0).mergeIn(config))));
    return verticle.actualPort();
  }

  @Test
  void aProtocolErrorWithATailStillDeliversTheEarlierResponseIntact(Vertx vertx) throws Exception {
    int port = deploy(vertx, new JsonObject(), null);
    byte[] payload = new byte[200_000];
    new Random(1).nextBytes(payload);
    // One write: a 200,000-byte frame, a header of 0xFFFFFFFF, and 300 KB the server never parses.
    byte[] tail = new byte[300_000];
    Buffer oneWrite = frame(payload).appendBytes(new byte[] {-1, -1, -1, -1}).appendBytes(tail);
    for (int trial = 0; trial < 10; trial++) {
      try (Socket socket = connect(port)) {
        CompletableFuture<Void> sending = sendInBackground(socket, oneWrite.getBytes());
        assertArrayEquals(payload, readFrame(socket), "trial " + trial);
        assertEquals(-1, socket.getInputStream().read(), "trial " + trial + ": a FIN after the response");
        sending.get(10, TimeUnit.SECONDS);
      }
    }
    await(metrics.closes(10));
    assertEquals(10, metrics.closedFor(CloseReason.PROTOCOL_ERROR), "each trial ended by its bad header: " + metrics.closeReasons());
  }

  @Test
  void aFailedHandlerEndsAfterTheEarlierAnswersWhileTheClientKeepsSending(Vertx vertx) throws Exception {
    RequestHandler failOnFail = request -> request.toString().equals("fail")
      ? Future.failedFuture(new IllegalStateException("no")) : Future.succeededFuture(request);
    int port = deploy(vertx, new JsonObject(), failOnFail);
    Buffer requests = frame(bytes("a")).appendBuffer(frame(bytes("fail")));
    for (int i = 0; i < 1000; i++) {
      requests.appendBuffer(frame(new byte[1000]));
    }
    try (Socket socket = connect(port)) {
      CompletableFuture<Void> sending = sendInBackground(socket, requests.getBytes());
      assertArrayEquals(bytes("a"), readFrame(socket));
      assertEquals(-1, socket.getInputStream().read(), "a FIN after the answer before the failure");
      sending.get(10, TimeUnit.SECONDS);
    }
    await(metrics.closes(1));
    assertEquals(List.of(CloseReason.HANDLER_FAILED), metrics.closeReasons());
  }

  @Test
  void aFrameTimeoutEndsAfterTheEarlierAnswersWhileTheClientTrickles(Vertx vertx) throws Exception {
    int port = deploy(vertx, new JsonObject().put("frameTimeoutMs", 500), null);
    try (Socket socket = connect(port)) {
      OutputStream out = socket.getOutputStream();
      out.write(frame(bytes("early")).appendIntLE(100).getBytes());
      out.flush();
      assertArrayEquals(bytes("early"), readFrame(socket));
      CountDownLatch stop = new CountDownLatch(1);
      CompletableFuture<Void> trickling = CompletableFuture.runAsync(() -> {
        try {
          while (!stop.await(50, TimeUnit.MILLISECONDS)) {
            out.write('x');
            out.flush();
          }
        } catch (IOException | InterruptedException e) {
          // the server closed; the trickle ends
        }
      });
      try {
        assertEquals(-1, socket.getInputStream().read(), "a FIN once frameTimeoutMs has passed");
      } finally {
        stop.countDown();
        trickling.get(10, TimeUnit.SECONDS);
      }
    }
    await(metrics.closes(1));
    assertEquals(List.of(CloseReason.FRAME_TIMEOUT), metrics.closeReasons(), "trickling does not extend a frame's time");
  }

  /**
   * A client that keeps sending as fast as it can after the server's FIN: the server reads and discards,
   * holds nothing, and closes when {@code lingerTimeoutMs} has passed.
   */
  @Test
  void aClientThatSendsGigabytesWhileTheCloseLingersIsCutOffOnTime(Vertx vertx) throws Exception {
    int port = deploy(vertx, new JsonObject().put("lingerTimeoutMs", 1000), null);
    ConnectionLimits limits = DeploymentLimits.of(vertx, deploymentId);
    try (Socket socket = connect(port)) {
      OutputStream out = socket.getOutputStream();
      out.write(frame(bytes("last")).appendBytes(new byte[] {-1, -1, -1, -1}).getBytes());
      out.flush();
      AtomicLong sent = new AtomicLong();
      CompletableFuture<Long> flooding = CompletableFuture.supplyAsync(() -> {
        byte[] chunk = new byte[1 << 20];
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        try {
          while (sent.get() < (8L << 30) && System.nanoTime() < deadline) {
            out.write(chunk);
            sent.addAndGet(chunk.length);
          }
        } catch (IOException e) {
          return System.nanoTime();
        }
        return -1L;
      });
      assertArrayEquals(bytes("last"), readFrame(socket));
      assertEquals(-1, socket.getInputStream().read(), "a FIN after the last response");
      long finNanos = System.nanoTime();
      long peakHeld = 0;
      long cutNanos = 0;
      for (int checks = 0; checks < 2_500 && cutNanos == 0; checks++) {
        peakHeld = Math.max(peakHeld, limits.budget().used());
        try {
          cutNanos = flooding.get(10, TimeUnit.MILLISECONDS);
        } catch (TimeoutException stillFlooding) {
          // sample again
        }
      }
      assertTrue(cutNanos > 0, "the server never ended the linger (sent " + sent.get() + " bytes)");
      long lingeredMs = TimeUnit.NANOSECONDS.toMillis(cutNanos - finNanos);
      assertTrue(lingeredMs < 4_000, "lingered " + lingeredMs + " ms with lingerTimeoutMs 1000");
      assertTrue(sent.get() > 10 << 20, "the client kept sending while the close lingered: " + sent.get());
      assertEquals(0, peakHeld, "bytes read while lingering are held nowhere");
    }
    await(metrics.closes(1));
    assertEquals(List.of(CloseReason.PROTOCOL_ERROR), metrics.closeReasons(), "the linger does not change why it ended");
  }

  /**
   * SIGTERM (an undeploy) under 20 clients that keep pipelining: each gets an in-order, byte-exact prefix
   * of its responses and a FIN, and the shutdown line's counts say so.
   */
  @Test
  void aShutdownUnderPipeliningClientsEndsEachWithAPrefixAndAFin(Vertx vertx) throws Exception {
    // The deadline is not under test here (CloseStateTest and ConnectionTest cut at it, in virtual time): a generous
    // one lets a loaded machine drain every client, and "0 cut" in the shutdown line says the drain beat it.
    int port = deploy(vertx, new JsonObject().put("shutdownTimeoutMs", 20_000), null);
    int clients = 20;
    List<PipeliningClient> running = new ArrayList<>();
    for (int i = 0; i < clients; i++) {
      running.add(new PipeliningClient(connect(port), i));
    }
    try {
      for (PipeliningClient client : running) {
        assertTrue(client.warmedUp.await(20, TimeUnit.SECONDS), "client " + client.id + " was never answered");
      }
      await(vertx.undeploy(deploymentId));
      for (PipeliningClient client : running) {
        assertEquals("end of stream", client.ending.get(20, TimeUnit.SECONDS), "client " + client.id);
      }
      assertEquals(clients, metrics.closedFor(CloseReason.SERVER_SHUTDOWN), "every connection ended by the shutdown");
      // The undeploy completed once the server had shut down, and logged its line: how many were drained and how
      // many cut (none here: nothing was left for shutdownTimeoutMs to cut) is in that line alone, so it is read from it.
      String line = await(serverLog.await(Level.INFO, "shut down"));
      // A client between two rounds owes nothing at that moment: closed at once (idle) rather than drained; one whose
      // next round reached the server after its close was decided lost that round's requests, and the line says so.
      java.util.regex.Matcher counts = java.util.regex.Pattern.compile(": (\\d+) connection\\(s\\) drained, (\\d+) closed idle, (\\d+) lost a request, 0 cut$").matcher(line);
      assertTrue(counts.find(), line);
      assertEquals(clients, Integer.parseInt(counts.group(1)) + Integer.parseInt(counts.group(2)) + Integer.parseInt(counts.group(3)), line);
      assertEquals(Integer.parseInt(counts.group(3)), metrics.requestsLost().size(), "the meter counts what the line says");
    } finally {
      for (PipeliningClient client : running) {
        client.close();
      }
    }
  }

  /**
   * A client that reads a 4 MiB response slowly but steadily (about 1.6 MB/s, so well past
   * writeStallTimeoutMs) is not a stalled client: it keeps its connection and gets every byte.
   */
  @Test
  void aSlowButSteadyReaderIsNotCutByTheWriteStallTimeout(Vertx vertx) throws Exception {
    // Small socket buffers on both sides, so that the response waits in the server's write queue.
    int port = deploy(vertx, new JsonObject().put("writeStallTimeoutMs", 1000)
      .put("netServerOptions", new JsonObject().put("sendBufferSize", 64 << 10)), null);
    byte[] payload = new byte[4 << 20];
    new Random(5).nextBytes(payload);
    try (Socket socket = new Socket()) {
      socket.setReceiveBufferSize(64 << 10);
      socket.connect(new java.net.InetSocketAddress("127.0.0.1", port), SOCKET_TIMEOUT_MS);
      socket.setSoTimeout(SOCKET_TIMEOUT_MS);
      CompletableFuture<Void> sending = sendInBackground(socket, frame(payload).getBytes());
      DataInputStream in = new DataInputStream(socket.getInputStream());
      byte[] response = new byte[4 + payload.length];
      long started = System.nanoTime();
      for (int at = 0; at < response.length; ) {
        int n = in.read(response, at, Math.min(32 << 10, response.length - at));
        assertTrue(n > 0, "the server ended the connection after " + at + " bytes");
        at += n;
        // The client's own pace: this is the slowness under test, not a wait for the server.
        TimeUnit.MILLISECONDS.sleep(20);
      }
      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
      assertTrue(tookMs > 1500, "read too fast to test anything: " + tookMs + " ms");
      assertArrayEquals(payload, Arrays.copyOfRange(response, 4, response.length));
      sending.get(10, TimeUnit.SECONDS);
      socket.getOutputStream().write(frame(bytes("still here")).getBytes());
      assertArrayEquals(bytes("still here"), readFrame(socket));
    }
  }

  /** A client that writes numbered 64-byte frames without pause and checks each response in order. */
  private static final class PipeliningClient {
    final int id;
    final Socket socket;
    final CompletableFuture<String> ending = new CompletableFuture<>();
    /** Counted down at the 200th response, or when the stream ends before. */
    final CountDownLatch warmedUp = new CountDownLatch(1);
    volatile boolean stopped;

    PipeliningClient(Socket socket, int id) {
      this.socket = socket;
      this.id = id;
      Thread writer = new Thread(this::write, "pipelining-writer-" + id);
      Thread reader = new Thread(this::read, "pipelining-reader-" + id);
      writer.setDaemon(true);
      reader.setDaemon(true);
      writer.start();
      reader.start();
    }

    private static byte[] payload(long n) {
      byte[] p = new byte[64];
      ByteBuffer.wrap(p).putLong(n).putLong(~n);
      return p;
    }

    private void write() {
      try {
        OutputStream out = socket.getOutputStream();
        for (long n = 0; !stopped && n < 50_000_000; n++) {
          out.write(frame(payload(n)).getBytes());
        }
      } catch (IOException e) {
        // the server has closed; the writer stops
      }
    }

    private void read() {
      try {
        DataInputStream in = new DataInputStream(socket.getInputStream());
        for (long n = 0; ; n++) {
          int first = in.read();
          if (first < 0) {
            ending.complete("end of stream");
            // As a client does at the end of the stream: close, which ends the server's lingering close.
            socket.close();
            return;
          }
          byte[] rest = new byte[3];
          in.readFully(rest);
          int length = ByteBuffer.wrap(new byte[] {(byte) first, rest[0], rest[1], rest[2]}).order(ByteOrder.LITTLE_ENDIAN).getInt();
          byte[] got = new byte[length];
          in.readFully(got);
          if (!Arrays.equals(payload(n), got)) {
            ending.complete("response " + n + " is not the echo of request " + n);
            return;
          }
          if (n == 199) {
            warmedUp.countDown();
          }
        }
      } catch (IOException e) {
        ending.complete(e.toString());
      } finally {
        stopped = true;
        warmedUp.countDown();
      }
    }

    void close() throws IOException {
      stopped = true;
      socket.close();
    }
  }

  private static Socket connect(int port) throws IOException {
    Socket socket = new Socket("127.0.0.1", port);
    socket.setSoTimeout(SOCKET_TIMEOUT_MS);
    return socket;
  }

  private static CompletableFuture<Void> sendInBackground(Socket socket, byte[] bytes) {
    return CompletableFuture.runAsync(() -> {
      try {
        socket.getOutputStream().write(bytes);
        socket.getOutputStream().flush();
      } catch (IOException e) {
        // The server may close before taking everything: what matters is what the client read.
      }
    });
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static Buffer frame(byte[] payload) {
    return Buffer.buffer().appendIntLE(payload.length).appendBytes(payload);
  }

  private static byte[] readFrame(Socket socket) throws IOException {
    DataInputStream in = new DataInputStream(socket.getInputStream());
    byte[] head = new byte[4];
    in.readFully(head);
    byte[] payload = new byte[ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN).getInt()];
    in.readFully(payload);
    return payload;
  }
}
