package io.frameecho.server;

import io.frameecho.protocol.LengthField;
import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.OneEventLoop;
import io.frameecho.testkit.RecordingMetrics;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.transport.Transport;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A house full of connections, with real sockets: an idle one gives its slot to a newcomer, with a FIN, while
 * clients using theirs are never closed; with none idle the newcomer is turned away with a FIN, not a reset.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class IdleGiveWayTest {

  private static final byte[] HELLO = LengthField.DEFAULT.frame(io.vertx.core.buffer.Buffer.buffer("hello")).getBytes();

  private static final long GIVE_WAY_MS = 300;

  private final RecordingMetrics metrics = new RecordingMetrics();
  private final List<Socket> sockets = new ArrayList<>();
  private Vertx vertx;
  private LogCapture quiet;

  @BeforeEach
  void start() {
    // One event loop: the server's, which a test can keep busy from a context of its own.
    vertx = OneEventLoop.vertx();
    quiet = LogCapture.of("io.frameecho.server.impl.ConnectionLimits");
  }

  @AfterEach
  void stop() throws Exception {
    for (Socket s : sockets) {
      s.close();
    }
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    quiet.close();
  }

  private int deploy(JsonObject config) throws Exception {
    FrameEchoVerticle verticle = new FrameEchoVerticle().metrics(metrics);
    JsonObject c = new JsonObject().put("host", "127.0.0.1").put("port", 0).mergeIn(config);
    vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(c)).toCompletionStage().toCompletableFuture()
      .get(10, TimeUnit.SECONDS);
    return verticle.actualPort();
  }

  private Socket connect(int port) throws IOException {
    Socket s = new Socket("127.0.0.1", port);
    s.setSoTimeout(5000);
    sockets.add(s);
    return s;
  }

  /** Sends one frame and reads its echo; false when the server closed the connection (a FIN) instead. */
  private static boolean echoed(Socket s) throws IOException {
    s.getOutputStream().write(HELLO);
    byte[] echo = new byte[HELLO.length];
    try {
      new DataInputStream(s.getInputStream()).readFully(echo);
    } catch (java.io.EOFException e) {
      return false;
    }
    assertArrayEquals(HELLO, echo);
    return true;
  }

  /** The server's FIN: the stream ends cleanly (a reset would throw). */
  private static void assertEndsWithFin(Socket s) throws IOException {
    InputStream in = s.getInputStream();
    try {
      while (in.read() >= 0) {
        // discard
      }
    } catch (SocketException e) {
      throw new AssertionError("reset instead of a FIN: " + e.getMessage(), e);
    }
  }

  @Test
  void anIdleConnectionGivesWayToANewcomerAndActiveClientsKeepTheirs() throws Exception {
    int port = deploy(new JsonObject().put("maxConnections", 12).put("idleGiveWayMs", GIVE_WAY_MS));
    List<Socket> idle = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      idle.add(connect(port));
    }
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicInteger activeFailures = new AtomicInteger();
    AtomicInteger activeEchoes = new AtomicInteger();
    List<Thread> active = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      Socket s = connect(port);
      Thread t = new Thread(() -> {
        try {
          while (running.get()) {
            if (!echoed(s)) {
              activeFailures.incrementAndGet();
              return;
            }
            activeEchoes.incrementAndGet();
            Thread.sleep(50);
          }
        } catch (Exception e) {
          activeFailures.incrementAndGet();
        }
      }, "active-client-" + i);
      t.start();
      active.add(t);
    }
    // Nobody has been quiet for idleGiveWayMs yet: the newcomer is turned away, with a FIN.
    Socket early = connect(port);
    assertFalse(echoed(early), "turned away while nobody has been quiet long enough");
    assertEndsWithFin(early);
    metrics.rejected(Rejection.MAX_CONNECTIONS, 1).toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
    // The rule is a duration on the server's clock: on real sockets, the test lets it pass (the unit tests of
    // ActivityOrder and Connection check the rule itself in virtual time).
    Thread.sleep(GIVE_WAY_MS + 200);
    boolean served = echoed(connect(port));
    running.set(false);
    for (Thread t : active) {
      t.join(10_000);
    }
    assertTrue(served, "the newcomer was served");
    assertEquals(0, activeFailures.get(), "clients using their connection keep it");
    assertTrue(activeEchoes.get() > 0);
    // The idle connection that gave way got a FIN; its client closes, as a client does at the end of its stream,
    // and the server counts the close then.
    int finished = 0;
    for (Socket s : idle) {
      s.setSoTimeout(200);
      try {
        if (s.getInputStream().read() < 0) {
          finished++;
          s.close();
        }
      } catch (java.net.SocketTimeoutException stillOpen) {
        // this one kept its slot
      }
    }
    assertEquals(1, finished, "one idle connection for one newcomer, and it got a FIN");
    metrics.closed(CloseReason.IDLE_EVICTED).toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
    assertEquals(1, metrics.closedFor(CloseReason.IDLE_EVICTED));
  }

  /**
   * Found by the hostile trial: a flood of connects lags the event loop, and an active client's next request sits
   * unread in the kernel while a newcomer is accepted; judged by the reads processed so far, its connection looked
   * idle and was closed for the newcomer. The test keeps the loop busy while the newcomer connects and then the client
   * sends, as the flood did: the loop's next poll accepts the newcomer before it reads the request.
   */
  @Test
  void aClientWhoseRequestWaitsUnreadInALaggingLoopKeepsItsConnection() throws Exception {
    int port = deploy(new JsonObject().put("maxConnections", 2).put("idleGiveWayMs", 1));
    Socket active = connect(port);
    assertTrue(echoed(active));
    // Active after the other: the front of the order, the first to give way if it looked idle.
    Socket quietOne = connect(port);
    assertTrue(echoed(quietOne));

    Socket[] newcomer = new Socket[1];
    boolean lagged = whileTheLoopIsBusy(() -> {
      newcomer[0] = connect(port);
      active.getOutputStream().write(HELLO);
    });

    byte[] echo = new byte[HELLO.length];
    new DataInputStream(active.getInputStream()).readFully(echo);
    assertArrayEquals(HELLO, echo, "the active client's request, unread while the loop lagged, was answered");
    assertTrue(lagged, "the newcomer connected, then the client sent, while the loop was busy");
    assertTrue(echoed(newcomer[0]), "the newcomer was served");
    assertEndsWithFin(quietOne);
    metrics.closed(CloseReason.IDLE_EVICTED).toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
    assertEquals(1, metrics.closedFor(CloseReason.IDLE_EVICTED));
    assertTrue(echoed(active), "and it keeps its connection");
  }

  /** What a client does, on the test's thread. */
  private interface ClientSide {
    void run() throws IOException;
  }

  /**
   * Keeps the server's (only) event loop busy while {@code clients} run, then a few milliseconds more (longer than
   * idleGiveWayMs 1): as a flood of connects lags the loop. The server accepts on that loop, so what the clients did
   * (a connection, a request, a half-close) waits in the kernel meanwhile, and the loop's next poll finds all of it, in
   * the order it happened. True when the clients were done while the loop was still busy.
   */
  private boolean whileTheLoopIsBusy(ClientSide clients) throws Exception {
    Context loop = vertx.getOrCreateContext();
    CountDownLatch busy = new CountDownLatch(1);
    CountDownLatch clientsDone = new CountDownLatch(1);
    AtomicBoolean lagged = new AtomicBoolean();
    CountDownLatch free = new CountDownLatch(1);
    loop.runOnContext(v -> {
      busy.countDown();
      try {
        lagged.set(clientsDone.await(10, TimeUnit.SECONDS));
        long lagEnd = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(5);
        while (System.nanoTime() < lagEnd) {
          Thread.onSpinWait();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        free.countDown();
      }
    });
    assertTrue(busy.await(10, TimeUnit.SECONDS));
    try {
      clients.run();
    } finally {
      clientsDone.countDown();
    }
    assertTrue(free.await(20, TimeUnit.SECONDS));
    return lagged.get();
  }

  /**
   * Found by a hostile trial: while the budget is spent (here by a client that sends a 16 MiB frame and never reads its
   * echo), a client that is answered pauses for the budget, is no longer read, and does not see its client close. Such
   * a connection gives its slot to a newcomer, as an idle one does (the kernel says its client closed).
   */
  @Test
  void aClientThatClosedWhileItsConnectionWaitedForTheBudgetGivesWayToANewcomer() throws Exception {
    assumeTrue(Transport.EPOLL.available(), "the kernel's TCP state is read through epoll's channel");
    int port = deploy(new JsonObject().put("maxConnections", 3).put("idleGiveWayMs", 1).put("maxBufferedBytes", 1 << 20));
    Socket nonReader = new Socket();
    nonReader.setReceiveBufferSize(4096);
    nonReader.connect(new java.net.InetSocketAddress("127.0.0.1", port));
    sockets.add(nonReader);
    // More than the kernel's buffers on both sides take of its echo: the rest stays held.
    byte[] big = new byte[16 << 20];
    nonReader.getOutputStream().write(LengthField.DEFAULT.frame(io.vertx.core.buffer.Buffer.buffer(big)).getBytes());
    // Its echo is produced and held, unread: the budget stays over its limit.
    metrics.until(m -> m.requests() >= 1).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    for (int i = 0; i < 2; i++) {
      Socket answered = connect(port);
      assertTrue(echoed(answered));
      answered.close();
    }
    // Every slot is taken, by the non-reader and two connections whose clients have gone.
    Socket newcomer = connect(port);
    assertTrue(echoed(newcomer), "the newcomer was served");
    assertEquals(0, metrics.closedFor(CloseReason.CLIENT_CLOSED), "the answered clients' ends were not read");
    metrics.closed(CloseReason.IDLE_EVICTED).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertEquals(0, metrics.rejectedFor(Rejection.MAX_CONNECTIONS));
  }

  /**
   * Found by the hostile trial: a newcomer that sends its request and shuts its sending side while it waits for a slot
   * made epoll read to the end; Netty closed the socket and the request was lost, unanswered and uncounted.
   */
  @Test
  void aNewcomerThatHalfClosesWhileItWaitsForASlotIsAnswered() throws Exception {
    int port = deploy(new JsonObject().put("maxConnections", 1).put("idleGiveWayMs", 1));
    Socket idle = connect(port);
    assertTrue(echoed(idle));
    Socket[] newcomer = new Socket[1];
    assertTrue(whileTheLoopIsBusy(() -> {
      newcomer[0] = connect(port);
      newcomer[0].getOutputStream().write(HELLO);
      newcomer[0].shutdownOutput();
    }));
    byte[] echo = new byte[HELLO.length];
    new DataInputStream(newcomer[0].getInputStream()).readFully(echo);
    assertArrayEquals(HELLO, echo, "answered after it half-closed while it waited");
    assertEndsWithFin(newcomer[0]);
    assertEndsWithFin(idle);
    metrics.closed(CloseReason.IDLE_EVICTED).toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
  }

  @Test
  void aNewcomerNobodyMakesRoomForIsTurnedAwayWithAFin() throws Exception {
    // Giving way turned off: the house is full, and nobody makes room.
    int port = deploy(new JsonObject().put("maxConnections", 2).put("idleGiveWayMs", 0));
    for (int i = 0; i < 2; i++) {
      assertTrue(echoed(connect(port)));
    }
    Socket newcomer = connect(port);
    // It sends at once, as a client does: unread input at the close would make a reset.
    newcomer.getOutputStream().write(HELLO);
    assertEndsWithFin(newcomer);
    metrics.rejected(Rejection.MAX_CONNECTIONS, 1).toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
    assertEquals(0, metrics.closedFor(CloseReason.IDLE_EVICTED));
  }
}
