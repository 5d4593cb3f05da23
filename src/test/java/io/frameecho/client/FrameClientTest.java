package io.frameecho.client;

import io.frameecho.protocol.FrameTooLargeException;
import io.frameecho.server.CloseReason;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.FrameEchoServer;
import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.RecordingMetrics;
import io.frameecho.testkit.RefusedPort;
import io.vertx.junit5.Checkpoint;
import io.vertx.core.Promise;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetServer;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

@ExtendWith(VertxExtension.class)
@Timeout(value = 30, timeUnit = TimeUnit.SECONDS)
class FrameClientTest {

  /** The handler failure a test causes logs a WARN line; captured, it stays off the console. */
  @RegisterExtension
  final LogCapture connectionLog = LogCapture.of("io.frameecho.server.impl.Connection");
  /** So does the rejection over maxConnections a test causes. */
  @RegisterExtension
  final LogCapture limitsLog = LogCapture.named("io.frameecho.server.impl.ConnectionLimits");

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

  @Test
  void aRequestIsResentOnceAtMost(Vertx vertx, VertxTestContext ctx) {
    List<Integer> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    closingServer(vertx, Integer.MAX_VALUE, seen)
      .compose(server -> FrameClient.connect(vertx, "127.0.0.1", server.actualPort()))
      .compose(client -> client.resendIdempotent(true).request(Buffer.buffer("never")).eventually(client::close))
      .onComplete(ctx.failing(e -> ctx.verify(() -> {
        assertInstanceOf(FrameClientException.class, e);
        assertEquals(List.of(0, 1), seen, "sent, re-sent once, then failed");
        ctx.completeNow();
      })));
  }
}
