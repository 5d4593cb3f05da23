package example;

import io.frameecho.client.FrameClient;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.FrameEchoServer;
import io.frameecho.server.FrameEchoVerticle;
import io.frameecho.server.RequestHandler;
import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An application that embeds frame-echo in its own Vert.x, with its own SLF4J provider, on the Vert.x line
 * this build was given. Clients are plain blocking sockets on the test thread, never on an event loop.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EmbeddedFrameEchoTest {

  private static final int SOCKET_TIMEOUT_MS = 20_000;

  private int port;

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }

  @BeforeEach
  void deploy(Vertx vertx) throws Exception {
    FrameEchoVerticle verticle = new FrameEchoVerticle();
    await(vertx.deployVerticle(verticle, new DeploymentOptions()
      .setConfig(new JsonObject().put("host", "127.0.0.1").put("port", 0).put("writeQueueMaxSize", 65536))));
    port = verticle.actualPort();
    assertTrue(port > 0);
  }

  @Test
  void runsOnTheVertxLineThisBuildChoseWithTheApplicationsOwnLogging() throws Exception {
    String version;
    try (InputStream in = Vertx.class.getClassLoader().getResourceAsStream("META-INF/vertx/vertx-version.txt")) {
      version = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
    }
    assertEquals(System.getProperty("expected.vertx.version"), version);
    assertEquals("org.slf4j.simple.SimpleLoggerFactory", LoggerFactory.getILoggerFactory().getClass().getName());
    for (String forced : List.of("ch.qos.logback.classic.Logger", "com.hazelcast.core.Hazelcast", "picocli.CommandLine",
      "org.HdrHistogram.Histogram", "io.micrometer.core.instrument.MeterRegistry", "io.vertx.launcher.application.VertxApplication")) {
      assertThrows(ClassNotFoundException.class, () -> Class.forName(forced), forced + " came with the library");
    }
  }

  @Test
  void theBooksScenarioWithA32MiBFrame() throws Exception {
    byte[] big = new byte[32 << 20];
    Arrays.fill(big, (byte) 'z');
    List<byte[]> requests = List.of(bytes("hello1"), bytes("hello2"), bytes("hello3"), big, bytes("hello5"));
    try (Socket socket = connect()) {
      CompletableFuture<Void> sending = CompletableFuture.runAsync(() -> sendAll(socket, requests));
      for (byte[] request : requests) {
        assertArrayEquals(request, readFrame(socket));
      }
      sending.get(20, TimeUnit.SECONDS);
    }
  }

  @Test
  void pipelinedFramesComeBackInOrderByteExact() throws Exception {
    Random random = new Random(42);
    List<byte[]> requests = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      byte[] payload = new byte[random.nextInt(i % 100 == 0 ? 300_000 : 2_000)];
      random.nextBytes(payload);
      requests.add(payload);
    }
    try (Socket socket = connect()) {
      CompletableFuture<Void> sending = CompletableFuture.runAsync(() -> sendAll(socket, requests));
      for (int i = 0; i < requests.size(); i++) {
        assertArrayEquals(requests.get(i), readFrame(socket), "response " + i);
      }
      sending.get(20, TimeUnit.SECONDS);
    }
  }

  /**
   * What the application's own metrics system would be told about reading: a {@link FrameEchoMetrics} of the
   * application's, with the first pause and the first resume as events the test waits for. Called on the server's
   * event loop; read here on the test thread, through an atomic and futures.
   */
  private static final class ReadingEvents implements FrameEchoMetrics {
    final AtomicInteger resumes = new AtomicInteger();
    final CompletableFuture<Void> firstPause = new CompletableFuture<>();
    final CompletableFuture<Void> firstResume = new CompletableFuture<>();

    @Override
    public void readingPaused() {
      firstPause.complete(null);
    }

    @Override
    public void readingResumed() {
      resumes.incrementAndGet();
      firstResume.complete(null);
    }
  }

  /**
   * A client that sends 64 MiB without reading, to an application whose answers are late: the server stops
   * reading it once {@code handler.maxInFlight} answers are awaited (the application's metrics are told), and
   * takes in no more while they are, so the client cannot send everything. Once the application answers and
   * the client reads, the server reads again and every response arrives, in order and byte-exact.
   */
  @Test
  void aClientThatDoesNotReadIsHeldBackThenServedInFull(Vertx vertx) throws Exception {
    byte[] payload = new byte[1 << 20];
    new Random(7).nextBytes(payload);
    int frames = 64;
    int maxInFlight = 8;
    // The application holds its answers until the test lets them go; all of this runs on the server's event loop.
    List<Runnable> held = new ArrayList<>();
    AtomicReference<Context> serverLoop = new AtomicReference<>();
    AtomicBoolean holding = new AtomicBoolean(true);
    AtomicInteger taken = new AtomicInteger();
    RequestHandler lateEcho = request -> {
      taken.incrementAndGet();
      if (!holding.get()) {
        return Future.succeededFuture(request);
      }
      serverLoop.set(Vertx.currentContext());
      Promise<Buffer> answer = Promise.promise();
      held.add(() -> answer.complete(request));
      return answer.future();
    };
    ReadingEvents reading = new ReadingEvents();
    FrameEchoVerticle verticle = new FrameEchoVerticle(lateEcho).metrics(reading);
    String deployment = await(vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(new JsonObject()
      .put("host", "127.0.0.1").put("port", 0).put("writeQueueMaxSize", 65536)
      .put("handler", new JsonObject().put("maxInFlight", maxInFlight)))));
    port = verticle.actualPort();
    try (Socket socket = connect()) {
      AtomicInteger sent = new AtomicInteger();
      CompletableFuture<Void> sending = CompletableFuture.runAsync(() -> {
        try {
          OutputStream out = socket.getOutputStream();
          for (int i = 0; i < frames; i++) {
            out.write(header(payload.length));
            out.write(payload);
            sent.incrementAndGet();
          }
          out.flush();
        } catch (IOException e) {
          throw new RuntimeException(e);
        }
      });
      reading.firstPause.get(20, TimeUnit.SECONDS);
      // Nothing answers while the answers are held: the server stays paused, and what it took in is final.
      assertEquals(maxInFlight, taken.get(), "requests taken in before the server stopped reading");
      // Only the kernel's socket buffers, a few MiB, hold what the client sent past that.
      assertTrue(sent.get() < frames, "all " + frames + " MiB were accepted without the server reading");
      assertEquals(0, reading.resumes.get(), "reading resumed with every answer still awaited");

      serverLoop.get().runOnContext(v -> {
        holding.set(false);
        held.forEach(Runnable::run);
      });
      for (int i = 0; i < frames; i++) {
        assertArrayEquals(payload, readFrame(socket), "response " + i);
      }
      sending.get(20, TimeUnit.SECONDS);
      reading.firstResume.get(20, TimeUnit.SECONDS);
      assertEquals(frames, taken.get());
    } finally {
      await(vertx.undeploy(deployment));
    }
  }

  @Test
  void aClientThatShutsDownItsSendingSideGetsEveryResponseThenTheEnd() throws Exception {
    byte[] big = new byte[8 << 20];
    new Random(3).nextBytes(big);
    List<byte[]> requests = List.of(bytes("one"), big, bytes(""), bytes("last"));
    try (Socket socket = connect()) {
      CompletableFuture<Void> sending = CompletableFuture.runAsync(() -> {
        sendAll(socket, requests);
        try {
          socket.shutdownOutput();
        } catch (IOException e) {
          throw new RuntimeException(e);
        }
      });
      for (byte[] request : requests) {
        assertArrayEquals(request, readFrame(socket));
      }
      assertEquals(-1, socket.getInputStream().read(), "end of stream after the last response");
      sending.get(20, TimeUnit.SECONDS);
    }
  }

  @Test
  void anOversizedHeaderEndsThatConnectionAfterTheEarlierResponses() throws Exception {
    try (Socket socket = connect(); Socket bystander = connect()) {
      OutputStream out = socket.getOutputStream();
      out.write(frame(bytes("before")));
      out.write(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff});
      out.flush();
      assertArrayEquals(bytes("before"), readFrame(socket));
      assertEquals(-1, socket.getInputStream().read(), "the server closed the connection");
      bystander.getOutputStream().write(frame(bytes("still here")));
      assertArrayEquals(bytes("still here"), readFrame(bystander));
    }
  }

  /**
   * Undeploying shuts the server down gracefully on every line: a client with a frame half sent gets the
   * responses to its whole frames, then the end of the stream, within {@code shutdownTimeoutMs}.
   */
  @Test
  void undeployAnswersWhatArrivedThenEndsTheConnection(Vertx vertx) throws Exception {
    FrameEchoVerticle verticle = new FrameEchoVerticle();
    String deployment = await(vertx.deployVerticle(verticle, new DeploymentOptions()
      .setConfig(new JsonObject().put("host", "127.0.0.1").put("port", 0).put("shutdownTimeoutMs", 2000))));
    port = verticle.actualPort();
    try (Socket socket = connect()) {
      OutputStream out = socket.getOutputStream();
      out.write(frame(bytes("first")));
      out.write(frame(bytes("second")));
      out.write(header(100));
      out.write(bytes("half"));
      out.flush();
      assertArrayEquals(bytes("first"), readFrame(socket));
      assertArrayEquals(bytes("second"), readFrame(socket));
      long started = System.nanoTime();
      Future<Void> undeployed = vertx.undeploy(deployment);
      assertEquals(-1, socket.getInputStream().read(), "end of stream once shut down");
      // As a client does at the end of the stream: close, which ends the server's lingering close.
      socket.close();
      await(undeployed);
      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
      assertTrue(tookMs < 5_000, "shutdown took " + tookMs + " ms");
    }
  }

  @Test
  void aVerticleOfTheApplicationServesItsOwnHandlerToTheClientLibrary(Vertx vertx) throws Exception {
    RequestHandler upperCase = request -> Future.succeededFuture(Buffer.buffer(request.toString().toUpperCase()));
    AtomicInteger serverPort = new AtomicInteger();
    String deployment = await(vertx.deployVerticle(new VerticleBase() {
      @Override
      public Future<?> start() {
        return FrameEchoServer.create(vertx, new FrameEchoOptions().setHost("127.0.0.1").setPort(0))
          .requestHandler(upperCase)
          .listen()
          .onSuccess(server -> serverPort.set(server.actualPort()));
      }
    }));
    FrameClient client = await(FrameClient.connect(vertx, "127.0.0.1", serverPort.get()));
    try {
      Future<Buffer> hello = client.request(Buffer.buffer("hello"));
      Future<Buffer> world = client.request(Buffer.buffer("world"));
      assertEquals("HELLO", await(hello).toString());
      assertEquals("WORLD", await(world).toString());
    } finally {
      await(client.close());
      await(vertx.undeploy(deployment));
    }
  }

  private Socket connect() throws IOException {
    Socket socket = new Socket("127.0.0.1", port);
    socket.setSoTimeout(SOCKET_TIMEOUT_MS);
    socket.setTcpNoDelay(true);
    return socket;
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] header(int length) {
    return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(length).array();
  }

  private static byte[] frame(byte[] payload) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(header(payload.length));
    out.writeBytes(payload);
    return out.toByteArray();
  }

  private static void sendAll(Socket socket, List<byte[]> payloads) {
    try {
      OutputStream out = socket.getOutputStream();
      for (byte[] payload : payloads) {
        out.write(header(payload.length));
        out.write(payload);
      }
      out.flush();
    } catch (IOException e) {
      throw new RuntimeException(e);
    }
  }

  private static byte[] readFrame(Socket socket) throws IOException {
    DataInputStream in = new DataInputStream(socket.getInputStream());
    byte[] head = new byte[4];
    in.readFully(head);
    int length = ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN).getInt();
    byte[] payload = new byte[length];
    try {
      in.readFully(payload);
    } catch (EOFException e) {
      throw new EOFException("the stream ended inside a " + length + "-byte response");
    }
    return payload;
  }

  /**
   * Two instances deployed the Vert.x way (typed options need a supplier: Vert.x refuses one verticle object deployed
   * twice) listen on one port, port 0 included, and Vert.x hands their connections to each instance in turn: two
   * clients in a row are answered on two event loops.
   */
  @Test
  void twoInstancesShareOnePortAndEachServesOnItsOwnEventLoop(Vertx vertx) throws Exception {
    List<FrameEchoVerticle> instances = new java.util.concurrent.CopyOnWriteArrayList<>();
    RequestHandler whichLoop = request -> Future.succeededFuture(Buffer.buffer(Thread.currentThread().getName()));
    FrameEchoOptions options = new FrameEchoOptions().setHost("127.0.0.1").setPort(0);
    String id = await(vertx.deployVerticle(() -> {
      FrameEchoVerticle verticle = new FrameEchoVerticle(options, whichLoop);
      instances.add(verticle);
      return verticle;
    }, new DeploymentOptions().setInstances(2)));
    try {
      int shared = instances.get(0).actualPort();
      assertEquals(shared, instances.get(1).actualPort(), "one port");
      java.util.Set<String> loops = new java.util.HashSet<>();
      for (int i = 0; i < 2; i++) {
        try (Socket socket = new Socket("127.0.0.1", shared)) {
          socket.setSoTimeout(SOCKET_TIMEOUT_MS);
          sendAll(socket, List.of(bytes("which loop?")));
          loops.add(new String(readFrame(socket), StandardCharsets.UTF_8));
        }
      }
      assertEquals(2, loops.size(), "answered on: " + loops);
    } finally {
      await(vertx.undeploy(id));
    }
  }

  /** A unix domain socket, on this build's Vert.x line and its default transport. */
  @Test
  void servesOverAUnixSocket(Vertx vertx) throws Exception {
    java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("frame-echo-embedder");
    String path = dir.resolve("fe.sock").toString();
    FrameEchoServer server = await(FrameEchoServer.create(vertx, new FrameEchoOptions().setUnixSocket(path)).listen());
    try {
      FrameClient client = await(FrameClient.connect(vertx, new io.vertx.core.net.NetClientOptions(),
        io.vertx.core.net.SocketAddress.domainSocketAddress(path), 1 << 20));
      assertEquals("over a unix socket", await(client.request(Buffer.buffer("over a unix socket"))).toString());
      await(client.close());
    } finally {
      await(server.close());
      java.nio.file.Files.deleteIfExists(java.nio.file.Path.of(path));
      java.nio.file.Files.delete(dir);
    }
  }
}
