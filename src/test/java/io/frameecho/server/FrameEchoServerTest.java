package io.frameecho.server;

import io.frameecho.server.impl.connection.EchoHandler;
import io.frameecho.protocol.LengthField;
import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.Quiet;
import io.frameecho.testkit.RawConnection;
import io.frameecho.testkit.RecordingMetrics;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClientOptions;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class FrameEchoServerTest {

  /** The closes these tests cause on purpose log WARN lines; captured, they stay off the console. */
  @RegisterExtension
  final LogCapture connectionLog = LogCapture.of("io.frameecho.server.impl.Connection");

  /** What the server decided: close reasons and protocol errors, as events. */
  private final RecordingMetrics metrics = new RecordingMetrics();

  /** Deploys a verticle on a free loopback port and returns the port. */
  static Future<Integer> deploy(Vertx vertx, JsonObject config, RequestHandler handler) {
    return deploy(vertx, config, new FrameEchoVerticle(handler));
  }

  /** Deploys a verticle reporting its connections' events to {@code metrics}, and returns the port. */
  static Future<Integer> deploy(Vertx vertx, JsonObject config, RequestHandler handler, RecordingMetrics metrics) {
    return deploy(vertx, config, new FrameEchoVerticle(handler).metrics(metrics));
  }

  private static Future<Integer> deploy(Vertx vertx, JsonObject config, FrameEchoVerticle verticle) {
    JsonObject c = new JsonObject().put("host", "127.0.0.1").put("port", 0).mergeIn(config);
    return vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(c)).map(id -> verticle.actualPort());
  }

  static Future<Integer> deploy(Vertx vertx) {
    return deploy(vertx, new JsonObject(), new EchoHandler());
  }

  static Buffer frames(List<Buffer> payloads) {
    Buffer all = Buffer.buffer();
    payloads.forEach(p -> all.appendBuffer(LengthField.DEFAULT.frame(p)));
    return all;
  }

  /** A payload whose bytes depend on {@code seed}, so a swapped or shifted echo shows. */
  static Buffer payload(int size, long seed) {
    byte[] bytes = new byte[size];
    new Random(seed).nextBytes(bytes);
    return Buffer.buffer(bytes);
  }

  /** Opens a fresh connection and checks one round trip: the server is still serving. */
  static Future<Void> stillServing(Vertx vertx, int port) {
    return RawConnection.open(vertx, port).compose(c -> c.write(LengthField.DEFAULT.frame(Buffer.buffer("still there?")))
      .compose(v -> c.expectFrames(1))
      .compose(r -> r.get(0).equals(Buffer.buffer("still there?")) ? c.close() : Future.failedFuture("bad echo " + r)));
  }

  @Test
  void answersTheBooksClientByteForByte(Vertx vertx, VertxTestContext ctx) {
    byte[] big = new byte[32 << 20];
    Arrays.fill(big, (byte) 'z');
    List<Buffer> requests = List.of(Buffer.buffer("hello1"), Buffer.buffer("hello2"), Buffer.buffer("hello3"),
      Buffer.buffer(big), Buffer.buffer("hello5"));
    echoedInOneWrite(vertx, ctx, requests);
  }

  @Test
  void emptyFrameIsAnsweredWithAnEmptyFrame(Vertx vertx, VertxTestContext ctx) {
    echoedInOneWrite(vertx, ctx, List.of(Buffer.buffer(), Buffer.buffer("x"), Buffer.buffer(), Buffer.buffer()));
  }

  /** Sends {@code requests} pipelined in one write; the responses must be exactly them, in order. */
  private static void echoedInOneWrite(Vertx vertx, VertxTestContext ctx, List<Buffer> requests) {
    deploy(vertx)
      .compose(port -> RawConnection.open(vertx, port))
      .compose(c -> c.write(frames(requests)).compose(v -> c.expectFrames(requests.size())).eventually(c::close))
      .onComplete(ctx.succeeding(responses -> ctx.verify(() -> {
        assertEquals(requests, responses);
        ctx.completeNow();
      })));
  }

  @Test
  void frameOfExactlyMaxFrameSizeIsEchoed(Vertx vertx, VertxTestContext ctx) {
    int max = 1 << 20;
    Buffer request = payload(max, 1);
    deploy(vertx, new JsonObject().put("maxFrameSize", max), new EchoHandler())
      .compose(port -> RawConnection.open(vertx, port))
      .compose(c -> c.write(LengthField.DEFAULT.frame(request)).compose(v -> c.expectFrames(1)).eventually(c::close))
      .onComplete(ctx.succeeding(responses -> ctx.verify(() -> {
        assertEquals(request, responses.get(0));
        ctx.completeNow();
      })));
  }

  @Test
  void headerOverMaxFrameSizeClosesAfterEarlierResponses(Vertx vertx, VertxTestContext ctx) {
    oversizedHeaderScenario(vertx, ctx, 1024, 1025);
  }

  @Test
  void headerOf0xFFFFFFFFIsFourGiBNotMinusOne(Vertx vertx, VertxTestContext ctx) {
    oversizedHeaderScenario(vertx, ctx, LengthField.DEFAULT_MAX_FRAME_SIZE, 0xFFFFFFFFL);
  }

  /**
   * A header announcing {@code badLength} (unsigned: 0xFFFFFFFF is 4 GiB, over any maxFrameSize, not -1) is a
   * protocol error: the frames before it are answered, nothing after it, and the connection closes for that
   * reason alone. (The length the parser reads from the header is FrameParserTest's.)
   */
  private void oversizedHeaderScenario(Vertx vertx, VertxTestContext ctx, int max, long badLength) {
    List<Buffer> before = List.of(Buffer.buffer("one"), payload(max, 2), Buffer.buffer());
    Buffer stream = frames(before)
      .appendIntLE((int) badLength)
      .appendBuffer(Buffer.buffer(new byte[100]))
      .appendBuffer(LengthField.DEFAULT.frame(Buffer.buffer("after")));
    deploy(vertx, new JsonObject().put("maxFrameSize", max), new EchoHandler(), metrics)
      .compose(port -> RawConnection.open(vertx, port)
        .compose(c -> c.write(stream)
          .compose(v -> c.closed())
          .compose(v -> metrics.closed(CloseReason.PROTOCOL_ERROR))
          .compose(v -> {
            ctx.verify(() -> {
              assertEquals(before, c.received(), "responses to the frames before the bad header, and nothing after");
              assertEquals(1, metrics.protocolErrors());
              assertEquals(List.of(CloseReason.PROTOCOL_ERROR), metrics.closeReasons(), "the one connection, for that reason");
            });
            return c.close().compose(x -> stillServing(vertx, port));
          })))
      .onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void headersAndBodiesSplitIntoOneByteWrites(Vertx vertx, VertxTestContext ctx) {
    List<Buffer> requests = List.of(Buffer.buffer("hello"), Buffer.buffer(), payload(300, 3), Buffer.buffer("z"));
    deploy(vertx)
      .compose(port -> RawConnection.open(vertx, port, new NetClientOptions().setTcpNoDelay(true)))
      .compose(c -> c.writeOneByteAtATime(frames(requests)).compose(v -> c.expectFrames(4)).eventually(c::close))
      .onComplete(ctx.succeeding(responses -> ctx.verify(() -> {
        assertEquals(requests, responses);
        ctx.completeNow();
      })));
  }

  @Test
  void thousandsOfPipelinedFramesOfRandomSizesComeBackInOrder(Vertx vertx, VertxTestContext ctx) {
    Random random = new Random(7);
    List<Buffer> requests = new ArrayList<>();
    // Mostly small frames (several to a read, echoed as runs), some spanning reads, a few over 1 MiB
    // (gathered in pieces).
    for (int i = 0; i < 5000; i++) {
      int size = random.nextInt(500) == 0 ? (1 << 20) + random.nextInt(2 << 20)
        : random.nextInt(10) == 0 ? random.nextInt(200_000) : random.nextInt(100);
      requests.add(payload(size, i));
    }
    echoedInOneWrite(vertx, ctx, requests);
  }

  @Test
  void hundredConcurrentConnections(Vertx vertx, VertxTestContext ctx) {
    deploy(vertx).compose(port -> {
      List<Future<Void>> all = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        List<Buffer> requests = List.of(payload(10, i), payload(5000, i + 1000), Buffer.buffer("conn " + i));
        all.add(RawConnection.open(vertx, port).compose(c -> c.write(frames(requests))
          .compose(v -> c.expectFrames(3))
          .compose(r -> r.equals(requests) ? Future.<Void>succeededFuture() : Future.<Void>failedFuture("mixed-up answers"))
          .eventually(c::close)));
      }
      return Future.all(all);
    }).onComplete(ctx.succeedingThenComplete());
  }

  /**
   * A client that sends 256 MiB without reading. The server must stop reading once its write queue is full
   * (so the bytes it has taken in stop growing, far below what was sent) and lose nothing once the client
   * reads.
   */
  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void clientThatDoesNotReadIsHeldBackAndLosesNothing(Vertx vertx, VertxTestContext ctx) {
    int frameSize = 1 << 20;
    int frameCount = 256;
    AtomicLong bytesTakenIn = new AtomicLong();
    RequestHandler countingEcho = request -> {
      bytesTakenIn.addAndGet(LengthField.DEFAULT.headerSize() + request.length());
      return Future.succeededFuture(request);
    };
    deploy(vertx, new JsonObject(), countingEcho)
      .compose(port -> RawConnection.open(vertx, port))
      .compose(c -> {
        c.stopReading();
        int[] sent = {0};
        int[] checked = {0};
        Promise<Void> allEchoed = Promise.promise();
        c.onFrame(frame -> {
          if (!frame.equals(payload(frameSize, checked[0]))) {
            allEchoed.tryFail("response " + checked[0] + " differs from its request");
          } else if (++checked[0] == frameCount) {
            allEchoed.tryComplete();
          }
        });
        Runnable[] pump = new Runnable[1];
        pump[0] = () -> {
          while (sent[0] < frameCount && !c.socket().writeQueueFull()) {
            c.write(LengthField.DEFAULT.frame(payload(frameSize, sent[0]++)));
          }
          if (sent[0] < frameCount) {
            c.socket().drainHandler(v -> pump[0].run());
          }
        };
        pump[0].run();
        return Quiet.until(vertx, bytesTakenIn::get, 10).compose(stalledAt -> {
          ctx.verify(() -> {
            assertTrue(sent[0] < frameCount, "the client could send everything: nothing held it back");
            assertTrue(stalledAt <= 64L << 20, "the server took in " + stalledAt + " bytes without their responses being read");
          });
          c.startReading();
          return allEchoed.future();
        }).eventually(c::close);
      })
      .onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void closeAtFrameBoundaryIsClientClosed(Vertx vertx, VertxTestContext ctx) {
    endOfConnectionScenario(vertx, ctx, LengthField.DEFAULT.frame(Buffer.buffer("bye")), 1, false, Set.of(CloseReason.CLIENT_CLOSED));
  }

  @Test
  void closeMidFrameIsUnexpectedEof(Vertx vertx, VertxTestContext ctx) {
    endOfConnectionScenario(vertx, ctx, Buffer.buffer().appendIntLE(100).appendString("only part"), 0, false,
      Set.of(CloseReason.UNEXPECTED_EOF));
  }

  @Test
  void resetMidFrameEndsThatConnectionOnly(Vertx vertx, VertxTestContext ctx) {
    // Whether the reset reaches the server as an end of input or as an error depends on the kernel's timing.
    endOfConnectionScenario(vertx, ctx, Buffer.buffer().appendIntLE(100).appendString("only part"), 0, true,
      Set.of(CloseReason.UNEXPECTED_EOF, CloseReason.IO_ERROR));
  }

  /** The client sends {@code bytes} and closes; its connection, the only one to end, ends for one of {@code reasons}. */
  private void endOfConnectionScenario(Vertx vertx, VertxTestContext ctx, Buffer bytes, int responses, boolean reset,
                                       Set<CloseReason> reasons) {
    // SO_LINGER 0 turns close() into a reset.
    NetClientOptions options = reset ? new NetClientOptions().setSoLinger(0) : new NetClientOptions();
    deploy(vertx, new JsonObject(), new EchoHandler(), metrics).compose(port -> RawConnection.open(vertx, port).compose(bystander ->
      RawConnection.open(vertx, port, options).compose(c -> c.write(bytes)
        .compose(v -> c.expectFrames(responses))
        .compose(v -> c.close())
        .compose(v -> metrics.closes(1))
        .compose(v -> {
          ctx.verify(() -> {
            List<CloseReason> closed = metrics.closeReasons();
            assertEquals(1, closed.size(), "only that connection ended: " + closed);
            assertTrue(reasons.contains(closed.get(0)), closed.get(0) + ", not one of " + reasons);
          });
          // The connection opened before is untouched, and new ones are served.
          return bystander.write(LengthField.DEFAULT.frame(Buffer.buffer("ok"))).compose(x -> bystander.expectFrames(1));
        })
        .compose(v -> bystander.close())
        .compose(v -> stillServing(vertx, port)))))
      .onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void answersCompletingOutOfOrderAreWrittenInRequestOrder(Vertx vertx, VertxTestContext ctx) {
    int n = 20;
    List<Promise<Buffer>> held = new ArrayList<>();
    List<Buffer> requests = new ArrayList<>();
    RequestHandler reverse = request -> {
      Promise<Buffer> p = Promise.promise();
      held.add(p);
      if (held.size() == n) {
        for (int i = n - 1; i >= 0; i--) {
          held.get(i).complete(requests.get(i));
        }
      }
      return p.future();
    };
    for (int i = 0; i < n; i++) {
      requests.add(Buffer.buffer("request " + i));
    }
    deploy(vertx, new JsonObject(), reverse)
      .compose(port -> RawConnection.open(vertx, port))
      .compose(c -> c.write(frames(requests)).compose(v -> c.expectFrames(n)).eventually(c::close))
      .onComplete(ctx.succeeding(responses -> ctx.verify(() -> {
        assertEquals(requests, responses);
        ctx.completeNow();
      })));
  }

  @Test
  void failedAnswerClosesAfterTheEarlierResponses(Vertx vertx, VertxTestContext ctx) {
    RequestHandler failOnBoom = request -> request.toString().equals("boom")
      ? Future.failedFuture(new IllegalStateException("cannot answer boom"))
      : Future.succeededFuture(request);
    List<Buffer> requests = List.of(Buffer.buffer("a"), Buffer.buffer("b"), Buffer.buffer("boom"), Buffer.buffer("c"));
    deploy(vertx, new JsonObject(), failOnBoom, metrics)
      .compose(port -> RawConnection.open(vertx, port)
        .compose(c -> c.write(frames(requests)).compose(v -> c.closed())
          .compose(v -> metrics.closed(CloseReason.HANDLER_FAILED))
          .map(v -> {
            ctx.verify(() -> {
              assertEquals(requests.subList(0, 2), c.received(), "the answers before the failure, none after");
              assertEquals(List.of(CloseReason.HANDLER_FAILED), metrics.closeReasons());
            });
            return null;
          })
          .eventually(c::close))
        .compose(v -> stillServing(vertx, port)))
      .onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void badConfigurationFailsTheDeploymentNamingTheKey(Vertx vertx, VertxTestContext ctx) {
    Future<String> wrongType = vertx.deployVerticle(new FrameEchoVerticle(),
      new DeploymentOptions().setConfig(new JsonObject().put("port", "1234")));
    Future<String> unknownKey = vertx.deployVerticle(new FrameEchoVerticle(),
      new DeploymentOptions().setConfig(new JsonObject().put("maxFramesize", 10)));
    Future<String> tooBig = vertx.deployVerticle(new FrameEchoVerticle(),
      new DeploymentOptions().setConfig(new JsonObject().put("port", 0).put("maxFrameSize", 4294967296L)));
    Future.join(wrongType, unknownKey, tooBig).onComplete(ar -> ctx.verify(() -> {
      assertEquals("invalid frame-echo configuration: port: expected an integer but got the string \"1234\"",
        wrongType.cause().getMessage());
      assertTrue(unknownKey.cause().getMessage().contains("unknown configuration key 'maxFramesize'"));
      assertTrue(tooBig.cause().getMessage().contains("maxFrameSize: 4294967296 is out of range"));
      ctx.completeNow();
    }));
  }

  @Test
  void portAlreadyInUseFailsTheDeployment(Vertx vertx, VertxTestContext ctx) {
    deploy(vertx)
      .compose(port -> deploy(vertx, new JsonObject().put("port", port), new EchoHandler()))
      .onComplete(ctx.failingThenComplete());
  }

  @Test
  void instancesShareOnePortAcrossEventLoops(Vertx vertx, VertxTestContext ctx) {
    Set<String> threads = ConcurrentHashMap.newKeySet();
    List<FrameEchoVerticle> instances = new ArrayList<>();
    RequestHandler recordingEcho = request -> {
      threads.add(Thread.currentThread().getName());
      return Future.succeededFuture(request);
    };
    // A negative port is a random port shared by every instance deployed with it (port 0 is not shared).
    DeploymentOptions options = new DeploymentOptions().setInstances(2)
      .setConfig(new JsonObject().put("host", "127.0.0.1").put("port", -1));
    vertx.deployVerticle(() -> {
      FrameEchoVerticle v = new FrameEchoVerticle(recordingEcho);
      synchronized (instances) {
        instances.add(v);
      }
      return v;
    }, options).compose(id -> {
      int port = instances.get(0).actualPort();
      ctx.verify(() -> assertEquals(port, instances.get(1).actualPort(), "both instances on one port"));
      List<Future<Void>> clients = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        clients.add(RawConnection.open(vertx, port).compose(c -> c.write(LengthField.DEFAULT.frame(Buffer.buffer("hi")))
          .compose(v -> c.expectFrames(1)).compose(r -> c.close())));
      }
      return Future.all(clients);
    }).onComplete(ctx.succeeding(v -> ctx.verify(() -> {
      assertEquals(2, threads.size(), "connections spread over both instances' event loops: " + threads);
      ctx.completeNow();
    })));
  }
}
