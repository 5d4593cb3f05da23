package io.frameecho.client;

import io.frameecho.protocol.FrameParser;
import io.frameecho.protocol.FrameTooLargeException;
import io.frameecho.protocol.LengthField;
import io.frameecho.server.CloseReason;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.FrameEchoServer;
import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.RecordingMetrics;
import io.frameecho.testkit.RefusedPort;
import io.frameecho.testkit.TestKeyStores;
import io.netty.buffer.ByteBuf;
import io.vertx.junit5.Checkpoint;
import io.vertx.core.Promise;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.PfxOptions;
import io.vertx.core.net.ServerSSLOptions;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntUnaryOperator;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

@ExtendWith(VertxExtension.class)
@Timeout(value = 30, timeUnit = TimeUnit.SECONDS)
class FrameClientTest {

  /** The handler failure a test causes logs a WARN line; captured, it stays off the console. */
  @RegisterExtension
  final LogCapture connectionLog = LogCapture.of("io.frameecho.server.impl.Connection");
  /** So does the rejection over maxConnections a test causes. */
  @RegisterExtension
  final LogCapture limitsLog = LogCapture.named("io.frameecho.server.impl.ConnectionLimits");

  /** Key stores for the TLS tests, made once (keytool is slow), and a server key pair the client does not trust. */
  private static TestKeyStores stores;
  private static Path untrusted;

  @BeforeAll
  static void makeStores() throws Exception {
    stores = TestKeyStores.create();
    untrusted = stores.newServerStore("untrusted");
  }

  @AfterAll
  static void deleteStores() throws Exception {
    stores.delete();
  }

  static Future<Integer> echoServer(Vertx vertx, int maxFrameSize) {
    return FrameEchoServer.create(vertx, new FrameEchoOptions().setHost("127.0.0.1").setPort(0).setMaxFrameSize(maxFrameSize))
      .listen().map(FrameEchoServer::actualPort);
  }

  @Test
  void pipelinedResponsesMatchTheirRequests(Vertx vertx, VertxTestContext ctx) {
    List<Buffer> requests = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      requests.add(Buffer.buffer("request-" + i + "-" + "x".repeat(i % 97)));
    }
    echoServer(vertx, 1 << 20)
      .compose(port -> FrameClient.connect(vertx, "127.0.0.1", port))
      .compose(client -> {
        List<Future<Buffer>> answers = new ArrayList<>();
        requests.forEach(r -> answers.add(client.request(r)));
        return Future.all(answers).map(all -> all.<Buffer>list()).eventually(client::close);
      })
      .onComplete(ctx.succeeding(responses -> ctx.verify(() -> {
        assertEquals(requests, responses);
        ctx.completeNow();
      })));
  }

  /** The server answers two requests and closes (its handler failed): those two complete, only the third fails. */
  @Test
  void answersThatArrivedBeforeACloseCompleteAndOnlyTheRestFail(Vertx vertx, VertxTestContext ctx) {
    RecordingMetrics serverEvents = new RecordingMetrics();
    FrameEchoServer.create(vertx, new FrameEchoOptions().setHost("127.0.0.1").setPort(0))
      .requestHandler(request -> request.toString().equals("three")
        ? Future.failedFuture(new IllegalStateException("no third answer")) : Future.succeededFuture(request))
      .metrics(serverEvents)
      .listen()
      .compose(server -> FrameClient.connect(vertx, "127.0.0.1", server.actualPort()))
      .compose(client -> {
        List<Future<Buffer>> answers = List.of(client.request(Buffer.buffer("one")), client.request(Buffer.buffer("two")),
          client.request(Buffer.buffer("three")));
        return Future.join(answers).transform(ar -> Future.succeededFuture(answers)).eventually(client::close);
      })
      .compose(answers -> serverEvents.closed(CloseReason.HANDLER_FAILED).map(answers))
      .onComplete(ctx.succeeding(answers -> ctx.verify(() -> {
        assertEquals("one", answers.get(0).result().toString());
        assertEquals("two", answers.get(1).result().toString());
        assertInstanceOf(FrameClientException.class, answers.get(2).cause());
        assertEquals(List.of(CloseReason.HANDLER_FAILED), serverEvents.closeReasons(), "the server closed it, for its failed handler");
        ctx.completeNow();
      })));
  }

  @Test
  void requestsFromAnotherThreadKeepTheirOrder(Vertx vertx) throws Exception {
    int port = echoServer(vertx, 1 << 20).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    FrameClient client = FrameClient.connect(vertx, "127.0.0.1", port).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    List<Future<Buffer>> answers = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      answers.add(client.request(Buffer.buffer("n" + i)));
    }
    List<Buffer> responses = Future.all(answers).map(all -> all.<Buffer>list())
      .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    for (int i = 0; i < 200; i++) {
      assertEquals("n" + i, responses.get(i).toString());
    }
    assertEquals(200, client.requestsSent());
    client.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /**
   * A server that hangs up at accept, reached from a thread of no event loop, many times: however soon the close
   * follows the connect, the client sees it, and its request fails rather than waiting for ever.
   */
  @Test
  void aCloseRightAfterTheConnectIsNeverMissed(Vertx vertx) throws Exception {
    NetServer hangsUp = vertx.createNetServer().connectHandler(socket -> socket.close());
    int port = hangsUp.listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS).actualPort();
    for (int i = 0; i < 300; i++) {
      FrameClient client;
      try {
        client = FrameClient.connect(vertx, "127.0.0.1", port).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      } catch (java.util.concurrent.ExecutionException closedBeforeConnected) {
        continue;
      }
      Future<Buffer> answer = client.request(Buffer.buffer("anyone?"));
      java.util.concurrent.ExecutionException failed = org.junit.jupiter.api.Assertions.assertThrows(
        java.util.concurrent.ExecutionException.class,
        () -> answer.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS), "connection " + i);
      assertInstanceOf(FrameClientException.class, failed.getCause());
      client.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
    hangsUp.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  void pendingRequestsFailWhenTheServerCloses(Vertx vertx, VertxTestContext ctx) {
    // A server that hangs up on the first bytes it receives, answering nothing.
    NetServer rude = vertx.createNetServer().connectHandler(socket -> socket.handler(data -> socket.close()));
    rude.listen(0, "127.0.0.1")
      .compose(server -> FrameClient.connect(vertx, "127.0.0.1", server.actualPort()))
      .onComplete(ctx.succeeding(client -> {
        Future<Buffer> first = client.request(Buffer.buffer("one"));
        Future<Buffer> second = client.request(Buffer.buffer("two"));
        Future.join(first, second).onComplete(ar -> ctx.verify(() -> {
          assertInstanceOf(FrameClientException.class, first.cause());
          assertTrue(second.cause().getMessage().startsWith("refused by the server"), second.cause().getMessage());
          Future<Buffer> late = client.request(Buffer.buffer("three"));
          late.onComplete(ctx.failing(err -> ctx.verify(() -> {
            assertInstanceOf(FrameClientException.class, err);
            ctx.completeNow();
          })));
        }));
      }));
  }

  @Test
  void requestOverMaxFrameSizeIsRefusedLocally(Vertx vertx, VertxTestContext ctx) {
    echoServer(vertx, 1 << 20)
      .compose(port -> FrameClient.connect(vertx, "127.0.0.1", port, 10))
      .onComplete(ctx.succeeding(client -> client.request(Buffer.buffer(new byte[11]))
        .onComplete(ctx.failing(err -> ctx.verify(() -> {
          assertInstanceOf(IllegalArgumentException.class, err);
          client.request(Buffer.buffer(new byte[10])).eventually(client::close).onComplete(ctx.succeedingThenComplete());
        })))));
  }

  @Test
  void oversizedResponseFailsThePendingRequests(Vertx vertx, VertxTestContext ctx) {
    // A server that answers any bytes with a header announcing 2000 bytes, past the client's limit.
    NetServer raw = vertx.createNetServer().connectHandler(
      socket -> socket.handler(data -> socket.write(Buffer.buffer().appendIntLE(2000))));
    raw.listen(0, "127.0.0.1")
      .compose(server -> FrameClient.connect(vertx, "127.0.0.1", server.actualPort(), 1024))
      .onComplete(ctx.succeeding(client -> client.request(Buffer.buffer("hello!!!")).onComplete(ctx.failing(err -> ctx.verify(() -> {
        assertInstanceOf(FrameClientException.class, err);
        FrameTooLargeException tooLarge = assertInstanceOf(FrameTooLargeException.class, err.getCause());
        assertEquals(2000, tooLarge.length());
        assertEquals(1024, tooLarge.maxFrameSize());
        client.close().onComplete(ctx.succeedingThenComplete());
      })))));
  }

  @Test
  void connectionRefusedFailsTheConnect(Vertx vertx, VertxTestContext ctx) {
    RefusedPort.of(vertx).onComplete(ctx.succeeding(port ->
      FrameClient.connect(vertx, "127.0.0.1", port).onComplete(ctx.failingThenComplete())));
  }

  /** A request not answered in time fails alone; its late response is dropped and the next request gets its own. */
  @Test
  void aRequestTimeoutFailsThatRequestAndTheConnectionGoesOn(Vertx vertx, VertxTestContext ctx) {
    Promise<Buffer> slowAnswer = Promise.promise();
    FrameEchoServer.create(vertx, new FrameEchoOptions().setHost("127.0.0.1").setPort(0))
      .requestHandler(request -> request.toString().equals("slow") ? slowAnswer.future() : Future.succeededFuture(request))
      .listen()
      .compose(server -> FrameClient.connect(vertx, "127.0.0.1", server.actualPort()))
      .onComplete(ctx.succeeding(client -> {
        client.requestTimeout(100);
        Future<Buffer> slow = client.request(Buffer.buffer("slow"));
        // Only the slow one has a deadline: the fast one waits behind it, in order, for as long as it takes.
        client.requestTimeout(0);
        Future<Buffer> fast = client.request(Buffer.buffer("fast"));
        slow.onComplete(ctx.failing(err -> ctx.verify(() -> {
          assertInstanceOf(FrameClientException.class, err);
          assertTrue(err.getMessage().contains("requestTimeout"), err.getMessage());
          assertFalse(fast.isComplete(), "answers come in order: the fast one waits behind the slow one");
          slowAnswer.complete(Buffer.buffer("late"));
          fast.compose(answer -> {
            ctx.verify(() -> assertEquals("fast", answer.toString(), "the late answer was dropped, not given to the next"));
            return client.request(Buffer.buffer("again"));
          }).eventually(client::close).onComplete(ctx.succeeding(again -> ctx.verify(() -> {
            assertEquals("again", again.toString());
            ctx.completeNow();
          })));
        })));
      }));
  }

  /** frame-echo turns a client over maxConnections away before answering anything: the client says "refused". */
  @Test
  void aClientTheServerTurnsAwaySaysRefusedAndIsToldOfTheClose(Vertx vertx, VertxTestContext ctx) {
    Checkpoint closed = ctx.checkpoint();
    Checkpoint refused = ctx.checkpoint();
    FrameEchoServer.create(vertx, new FrameEchoOptions().setHost("127.0.0.1").setPort(0).setMaxConnections(1).setIdleGiveWayMs(0))
      .listen()
      .compose(server -> FrameClient.connect(vertx, "127.0.0.1", server.actualPort())
        .compose(first -> first.request(Buffer.buffer("in")).map(first))
        .compose(first -> FrameClient.connect(vertx, "127.0.0.1", server.actualPort())
          .compose(second -> {
            second.closeHandler(v -> closed.flag());
            return second.request(Buffer.buffer("over the limit"));
          })
          .eventually(first::close)))
      .onComplete(ctx.failing(err -> ctx.verify(() -> {
        assertInstanceOf(FrameClientException.class, err);
        assertTrue(err.getMessage().startsWith("refused by the server"), err.getMessage());
        refused.flag();
      })));
  }

  /**
   * A server that closes each connection gracefully, without answering, until its {@code closesBeforeAnswering}-th
   * connection, which echoes: a restart as an idempotent client meets it.
   */
  private static Future<NetServer> closingServer(Vertx vertx, int closesBeforeAnswering, List<Integer> framesSeen) {
    int[] connections = new int[1];
    return vertx.createNetServer().connectHandler(socket -> {
      int n = connections[0]++;
      socket.handler(bytes -> {
        framesSeen.add(n);
        if (n < closesBeforeAnswering) {
          socket.end();
        } else {
          socket.write(bytes);
        }
      });
    }).listen(0, "127.0.0.1");
  }

  @Test
  void anIdempotentRequestLeftUnansweredByAGracefulCloseIsResentOnANewConnection(Vertx vertx, VertxTestContext ctx) {
    List<Integer> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    closingServer(vertx, 1, seen)
      .compose(server -> FrameClient.connect(vertx, "127.0.0.1", server.actualPort()))
      .compose(client -> client.resendIdempotent(true).request(Buffer.buffer("again"))
        .map(answer -> {
          ctx.verify(() -> {
            assertEquals(Buffer.buffer("again"), answer);
            assertEquals(1, client.requestsResent());
            assertEquals(1, client.requestsSent());
            assertEquals(List.of(0, 1), seen, "sent on the first connection, answered on the second");
          });
          return client;
        }))
      .compose(FrameClient::close)
      .onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void withoutTheApplicationsWordTheRequestFails(Vertx vertx, VertxTestContext ctx) {
    List<Integer> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    closingServer(vertx, 1, seen)
      .compose(server -> FrameClient.connect(vertx, "127.0.0.1", server.actualPort()))
      .compose(client -> client.request(Buffer.buffer("once")).eventually(client::close))
      .onComplete(ctx.failing(e -> ctx.verify(() -> {
        assertInstanceOf(FrameClientException.class, e);
        assertEquals(List.of(0), seen, "not sent again");
        ctx.completeNow();
      })));
  }

  /** Re-sent on each new connection until the deadline: then it fails, naming the last reason and the tries. */
  @Test
  void aRequestIsResentOnEachNewConnectionUntilTheDeadline(Vertx vertx, VertxTestContext ctx) {
    List<Integer> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    closingServer(vertx, Integer.MAX_VALUE, seen)
      .compose(server -> FrameClient.connect(vertx, "127.0.0.1", server.actualPort()))
      .onComplete(ctx.succeeding(client -> client.resendIdempotent(true).reconnectOptions(new ReconnectOptions(1, 10, 200))
        .request(Buffer.buffer("never")).onComplete(ctx.failing(e -> ctx.verify(() -> {
          assertInstanceOf(FrameClientException.class, e);
          long tries = client.reconnectAttempts();
          assertTrue(tries >= 1, "tried at least once: " + tries);
          assertTrue(e.getMessage().startsWith("gave up re-sending after " + tries + " attempt(s) to reconnect within 200 ms"),
            e.getMessage());
          assertTrue(e.getMessage().contains("refused by the server"), "the last reason: " + e.getMessage());
          assertEquals(tries, client.requestsResent(), "once on each new connection");
          List<Integer> eachConnection = new ArrayList<>();
          for (int i = 0; i <= tries; i++) {
            eachConnection.add(i);
          }
          assertEquals(eachConnection, seen, "sent on the first connection, then once on each new one");
          client.close().onComplete(ctx.succeedingThenComplete());
        })))));
  }

  /** Refuses a connection: closes it as it is accepted. */
  private static final int REFUSE = -1;

  /**
   * A server of echoes whose {@code n}-th connection ({@code connections} counts them) answers
   * {@code script.applyAsInt(n)} frames and closes when the next arrives (so a request is left unanswered), or is closed
   * as it is accepted ({@link #REFUSE}): a server restarting, as an idempotent client meets it.
   */
  private static Future<NetServer> scriptedServer(Vertx vertx, NetServerOptions options, IntUnaryOperator script,
                                                  AtomicInteger connections) {
    return vertx.createNetServer(options).connectHandler(socket -> {
      int answers = script.applyAsInt(connections.getAndIncrement());
      if (answers == REFUSE) {
        socket.close();
        return;
      }
      int[] left = {answers};
      FrameParser.reading(socket, 1 << 20, new FrameParser.Listener() {
        @Override
        public void frame(ByteBuf frame) {
          Buffer payload = LengthField.DEFAULT.message(frame);
          if (left[0] == 0) {
            socket.close();
          } else if (left[0] > 0) {
            left[0]--;
            socket.write(LengthField.DEFAULT.frame(payload));
          }
        }

        @Override
        public void failed(Throwable error) {
        }
      });
    }).listen(0, "127.0.0.1");
  }

  /** Ten requests, the first two answered, then three connections refused: all answered, in order, on the fifth. */
  private static Future<Void> ridesThroughRefusedReconnects(Vertx vertx, VertxTestContext ctx,
                                                           NetServerOptions serverOptions, NetClientOptions clientOptions) {
    AtomicInteger connections = new AtomicInteger();
    List<Buffer> requests = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      requests.add(Buffer.buffer("request-" + i));
    }
    boolean[] told = new boolean[1];
    return scriptedServer(vertx, serverOptions, n -> n == 0 ? 2 : n <= 3 ? REFUSE : Integer.MAX_VALUE, connections)
      .compose(server -> FrameClient.connect(vertx, clientOptions, "127.0.0.1", server.actualPort(), 1 << 20)
        .compose(client -> {
          client.resendIdempotent(true).reconnectOptions(new ReconnectOptions(1, 20, 20_000)).closeHandler(v -> told[0] = true);
          List<Future<Buffer>> answers = new ArrayList<>();
          requests.forEach(r -> answers.add(client.request(r)));
          return Future.all(answers).map(all -> {
            ctx.verify(() -> {
              assertEquals(requests, all.<Buffer>list(), "nothing lost, order kept");
              assertEquals(4, client.reconnectAttempts(), "three refused, the fourth served");
              assertEquals(5, connections.get());
              // Eight at least were left when the first connection closed: each re-sent on each of four connections.
              assertTrue(client.requestsResent() >= 4 * 8, "re-sent " + client.requestsResent());
              assertEquals(10, client.requestsSent());
              assertFalse(told[0], "the client is still connected");
            });
            return client;
          });
        })
        .compose(client -> client.close().compose(v -> server.close())));
  }

  @Test
  void idempotentRequestsRideThroughRefusedReconnectsInOrder(Vertx vertx, VertxTestContext ctx) {
    ridesThroughRefusedReconnects(vertx, ctx, new NetServerOptions(), new NetClientOptions().setTcpNoDelay(true))
      .onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void overTlsIdempotentRequestsRideThroughRefusedReconnectsInOrder(Vertx vertx, VertxTestContext ctx) {
    ridesThroughRefusedReconnects(vertx, ctx, tlsServer(stores.serverStore()), tlsClient())
      .onComplete(ctx.succeedingThenComplete());
  }

  /**
   * A restart that never comes back with a certificate the client trusts: each try's handshake fails, and at the
   * deadline the requests fail with the handshake's failure and the number of tries.
   */
  @Test
  void failedHandshakesAreRetriedUntilTheDeadlineThenTheRequestsFailSayingWhy(Vertx vertx, VertxTestContext ctx) {
    AtomicInteger connections = new AtomicInteger();
    scriptedServer(vertx, tlsServer(stores.serverStore()), n -> n == 0 ? 1 : Integer.MAX_VALUE, connections)
      .compose(server -> FrameClient.connect(vertx, tlsClient(), "127.0.0.1", server.actualPort(), 1 << 20)
        // The connection made goes on; new ones meet a certificate the client does not trust.
        .compose(client -> server.updateSSLOptions(new ServerSSLOptions().setKeyCertOptions(pfx(untrusted))).map(client))
        .compose(client -> {
          client.resendIdempotent(true).reconnectOptions(new ReconnectOptions(1, 20, 300));
          Future<Buffer> first = client.request(Buffer.buffer("one"));
          Future<Buffer> second = client.request(Buffer.buffer("two"));
          return Future.join(first, second).transform(ar -> {
            ctx.verify(() -> {
              assertEquals("one", first.result().toString());
              long tries = client.reconnectAttempts();
              String message = second.cause().getMessage();
              assertTrue(tries >= 1, "tried at least once: " + tries);
              assertTrue(message.startsWith("gave up re-sending after " + tries + " attempt(s)"), message);
              assertTrue(message.contains("reconnecting failed: "), message);
              assertTrue(causes(second.cause()).stream().anyMatch(javax.net.ssl.SSLException.class::isInstance),
                "the handshake's failure is the cause: " + causes(second.cause()));
              assertEquals(1, connections.get(), "no handshake completed after the first");
            });
            return client.close().compose(v -> server.close());
          });
        }))
      .onComplete(ctx.succeedingThenComplete());
  }

  /** A reset is re-sent past like an end of stream when the application said its requests are idempotent. */
  @Test
  void withResendingARequestLeftByAResetIsResent(Vertx vertx, VertxTestContext ctx) {
    AtomicInteger connections = new AtomicInteger();
    // Linger 0: the server's close is a reset.
    scriptedServer(vertx, new NetServerOptions().setSoLinger(0), n -> n == 0 ? 0 : Integer.MAX_VALUE, connections)
      .compose(server -> FrameClient.connect(vertx, "127.0.0.1", server.actualPort())
        .compose(client -> {
          client.resendIdempotent(true);
          List<Future<Buffer>> answers = List.of(client.request(Buffer.buffer("a")), client.request(Buffer.buffer("b")),
            client.request(Buffer.buffer("c")));
          return Future.all(answers).map(all -> {
            ctx.verify(() -> {
              assertEquals(List.of(Buffer.buffer("a"), Buffer.buffer("b"), Buffer.buffer("c")), all.<Buffer>list());
              assertEquals(1, client.reconnectAttempts());
              assertEquals(3, client.requestsResent());
              assertEquals(2, connections.get());
            });
            return client;
          });
        })
        .compose(client -> client.close().compose(v -> server.close())))
      .onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void reconnectOptionsAreChecked() {
    assertEquals(0, ReconnectOptions.DEFAULTS.delayBefore(1), "the first try at once");
    assertEquals(List.of(50L, 100L, 200L, 400L, 800L, 1000L, 1000L),
      java.util.stream.IntStream.rangeClosed(2, 8).mapToObj(ReconnectOptions.DEFAULTS::delayBefore).toList());
    assertEquals(Long.MAX_VALUE, new ReconnectOptions(1, Long.MAX_VALUE, 0).delayBefore(200), "no overflow");
    assertThrows(IllegalArgumentException.class, () -> new ReconnectOptions(0, 10, 10));
    assertThrows(IllegalArgumentException.class, () -> new ReconnectOptions(20, 10, 10));
    assertThrows(IllegalArgumentException.class, () -> new ReconnectOptions(1, 10, -1));
  }

  private static PfxOptions pfx(Path store) {
    return new PfxOptions().setPath(store.toString()).setPassword(TestKeyStores.PASSWORD);
  }

  private static NetServerOptions tlsServer(Path store) {
    return new NetServerOptions().setSsl(true).setKeyCertOptions(pfx(store));
  }

  private static NetClientOptions tlsClient() {
    return new NetClientOptions().setTcpNoDelay(true).setSsl(true).setHostnameVerificationAlgorithm("")
      .setTrustOptions(pfx(stores.clientTrust()));
  }

  private static List<Throwable> causes(Throwable error) {
    List<Throwable> chain = new ArrayList<>();
    for (Throwable t = error; t != null && !chain.contains(t); t = t.getCause()) {
      chain.add(t);
    }
    return chain;
  }
}
