package io.frameecho.server;

import io.frameecho.client.FrameClient;
import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.RecordingMetrics;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.transport.Transport;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A restart with handover, two processes played by two Vert.x instances: the old server's persistent clients keep
 * sending through its shutdown, and their connections move to the successor on the same port and handover socket.
 * No client sees a close, no request is lost or re-sent, every response comes in order.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class HandoverTest {

  private static final int CLIENTS = 40;
  /** Answers each client counts after the old server's shutdown ended. */
  private static final int AFTER_HANDOVER = 5;

  @TempDir
  Path dir;

  private final List<Vertx> servers = new ArrayList<>();

  @AfterEach
  void closeServers() throws Exception {
    for (Vertx v : servers) {
      v.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  /** The server's lines: the handover and shutdown lines, and the reusePort warning where tcp_migrate_req is 0. */
  @RegisterExtension
  final LogCapture serverLog = LogCapture.of(FrameEchoServer.class);

  /** A process of its own: a Vert.x instance on epoll. */
  private Vertx process() {
    Vertx process = Vertx.builder().withTransport(Transport.EPOLL).build();
    servers.add(process);
    return process;
  }

  private static Future<FrameEchoServer> start(Vertx process, FrameEchoOptions options, RecordingMetrics metrics) {
    Promise<FrameEchoServer> listening = Promise.promise();
    process.getOrCreateContext().runOnContext(v ->
      FrameEchoServer.create(process, options).metrics(metrics).listen().onComplete(listening));
    return listening.future();
  }

  private FrameEchoOptions options(int port) {
    return new FrameEchoOptions(new JsonObject().put("host", "127.0.0.1").put("port", port)
      .put("handoverSocket", dir.resolve("handover.sock").toString()))
      .setNetServerOptions(new NetServerOptions().setReusePort(true));
  }

  /** One persistent client: requests in a row, each checked against its echo, until told to stop. */
  private static final class Client {
    final FrameClient connection;
    final AtomicInteger answered = new AtomicInteger();
    int sent;
    volatile int stopAt = Integer.MAX_VALUE;
    final Promise<Void> done = Promise.promise();
    final Promise<Void> firstAnswer = Promise.promise();

    Client(FrameClient connection) {
      this.connection = connection;
    }

    void next(VertxTestContext test, int id) {
      if (answered.get() >= stopAt) {
        done.tryComplete();
        return;
      }
      String payload = "client " + id + " request " + sent++;
      connection.request(Buffer.buffer(payload)).onComplete(test.succeeding(echo -> test.verify(() -> {
        assertEquals(payload, echo.toString());
        answered.incrementAndGet();
        firstAnswer.tryComplete();
        next(test, id);
      })));
    }
  }

  @Test
  void persistentClientsMoveToTheSuccessorWithoutSeeingAClose(Vertx vertx, VertxTestContext test) {
    assumeTrue(Transport.EPOLL.available(), "only epoll adopts a socket's descriptor");
    RecordingMetrics oldMeters = new RecordingMetrics();
    RecordingMetrics newMeters = new RecordingMetrics();
    AtomicInteger closesSeen = new AtomicInteger();
    AtomicBoolean shutDown = new AtomicBoolean();
    List<Client> clients = new ArrayList<>();
    Vertx oldProcess = process();
    Vertx newProcess = process();
    start(oldProcess, options(0), oldMeters).compose(old -> {
      int port = old.actualPort();
      List<Future<FrameClient>> connected = new ArrayList<>();
      for (int i = 0; i < CLIENTS; i++) {
        connected.add(FrameClient.connect(vertx, "127.0.0.1", port)
          .onSuccess(c -> c.closeHandler(v -> closesSeen.incrementAndGet())));
      }
      return Future.all(connected).compose(all -> {
        for (int i = 0; i < CLIENTS; i++) {
          Client client = new Client(all.resultAt(i));
          clients.add(client);
          client.next(test, i);
        }
        // Every client has been answered by the old server before the successor starts.
        return Future.all(clients.stream().map(c -> c.firstAnswer.future()).toList());
      }).compose(v -> start(newProcess, options(port), newMeters))
        .compose(successor -> old.shutdown())
        .onSuccess(v -> {
          shutDown.set(true);
          clients.forEach(c -> c.stopAt = c.answered.get() + AFTER_HANDOVER);
        });
    }).compose(v -> Future.all(clients.stream().map(c -> c.done.future()).toList()))
      .onComplete(test.succeeding(v -> test.verify(() -> {
        assertTrue(shutDown.get());
        assertEquals(0, closesSeen.get(), "clients that saw their connection close");
        assertEquals(List.of(), oldMeters.requestsLost(), "requests the old server lost");
        assertEquals(CLIENTS, oldMeters.closedFor(CloseReason.SERVER_SHUTDOWN), "connections the old server let go");
        for (Client c : clients) {
          assertEquals(0, c.connection.requestsResent(), "requests re-sent");
        }
        // Each request was received by exactly one of the two servers. A client has one request out at a time,
        // so at most one of the answers it counts after the shutdown ended was the old server's.
        long sent = clients.stream().mapToLong(c -> c.sent).sum();
        assertEquals(sent, oldMeters.requests() + newMeters.requests(), "requests received by the two servers");
        assertTrue(newMeters.requests() >= (long) CLIENTS * (AFTER_HANDOVER - 1), "requests the successor answered: "
          + newMeters.requests());
        Future.all(clients.stream().map(c -> c.connection.close()).toList()).onComplete(test.succeedingThenComplete());
      })));
  }
  @Test
  void aHandoverSocketPathThatIsNotASocketFailsTheListenNamingTheKey(VertxTestContext test) throws Exception {
    assumeTrue(Transport.EPOLL.available(), "only epoll adopts a socket's descriptor");
    java.nio.file.Files.writeString(dir.resolve("handover.sock"), "not a socket");
    start(process(), options(0), new RecordingMetrics()).onComplete(test.failing(e -> test.verify(() -> {
      assertTrue(e.getMessage().contains("handoverSocket") && e.getMessage().contains("not a socket"), e.getMessage());
      test.completeNow();
    })));
  }

  @Test
  void aPathTooLongForTheSuffixIsRefusedNamingTheKey() {
    IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
      () -> new FrameEchoOptions().setHandoverSocket("/" + "x".repeat(FrameEchoOptions.MAX_HANDOVER_SOCKET_PATH_BYTES)));
    assertTrue(e.getMessage().startsWith("handoverSocket: "), e.getMessage());
  }

  @Test
  void withoutASuccessorTheConnectionsCloseAsWithoutHandoverAndThePathIsRemoved(Vertx vertx, VertxTestContext test) {
    assumeTrue(Transport.EPOLL.available(), "only epoll adopts a socket's descriptor");
    RecordingMetrics meters = new RecordingMetrics();
    AtomicInteger closesSeen = new AtomicInteger();
    Path socket = dir.resolve("handover.sock");
    start(process(), options(0), meters).compose(server -> {
      assertTrue(java.nio.file.Files.exists(socket), "listening at the handover socket");
      return FrameClient.connect(vertx, "127.0.0.1", server.actualPort())
        .compose(client -> client.closeHandler(v -> closesSeen.incrementAndGet()).request(Buffer.buffer("once"))
          .compose(echo -> server.shutdown()).map(client));
    }).compose(client -> meters.closed(CloseReason.SERVER_SHUTDOWN, 1).map(client))
      .onComplete(test.succeeding(client -> test.verify(() -> {
        assertTrue(!java.nio.file.Files.exists(socket), "the stopped server removed its own socket file");
        assertEquals(List.of(), meters.requestsLost());
        client.close().onComplete(v -> test.verify(() -> {
          assertEquals(1, closesSeen.get(), "the client saw its connection close");
          test.completeNow();
        }));
      })));
  }
}
