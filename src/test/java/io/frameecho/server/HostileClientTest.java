package io.frameecho.server;

import io.frameecho.server.impl.connection.EchoHandler;
import ch.qos.logback.classic.Level;
import io.frameecho.protocol.LengthField;
import io.frameecho.server.impl.shared.ConnectionLimits;
import io.frameecho.testkit.DeploymentLimits;
import io.frameecho.server.impl.shared.LogSummary;
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
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.frameecho.server.FrameEchoServerTest.frames;
import static io.frameecho.server.FrameEchoServerTest.payload;
import static io.frameecho.server.FrameEchoServerTest.stillServing;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Clients that attack or misbehave, each against a fresh server; after every case the server still
 * answers a fresh client, and the process-wide buffer budget is back to zero.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class HostileClientTest {

  /** The closes and rejections these tests cause on purpose log WARN and INFO lines; captured, they stay off the console. */
  @RegisterExtension
  final LogCapture connectionLog = LogCapture.of("io.frameecho.server.impl.Connection");
  /** Also how often the rejection summary is logged: one line a second at most, however many are turned away. */
  @RegisterExtension
  final LogCapture limitsLog = LogCapture.of("io.frameecho.server.impl.ConnectionLimits");
  /** Also the shutdown line, the one place that says how many connections were drained and how many cut. */
  @RegisterExtension
  final LogCapture serverLog = LogCapture.of(FrameEchoServer.class);
  /** What the server decided: close reasons, rejections, protocol errors, reading paused, as events. */
  private final RecordingMetrics metrics = new RecordingMetrics();

  private static final class Deployed {
    String id;
    int port;
  }

  /** The test's deployment, whose instances share one set of limits. */
  private String deploymentId;

  private Future<Deployed> deploy(Vertx vertx, JsonObject config, RequestHandler handler) {
    FrameEchoVerticle verticle = new FrameEchoVerticle(handler).metrics(metrics);
    JsonObject c = new JsonObject().put("host", "127.0.0.1").put("port", 0).mergeIn(config);
    return vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(c)).map(id -> {
      Deployed d = new Deployed();
      d.id = id;
      deploymentId = id;
      d.port = verticle.actualPort();
      return d;
    });
  }

  private Future<Integer> deploy(Vertx vertx, JsonObject config) {
    return deploy(vertx, config, new EchoHandler()).map(d -> d.port);
  }

  /** The server's last word after a case: a fresh client served, and no budget left held. */
  private Future<Void> recovered(Vertx vertx, int port) {
    return stillServing(vertx, port).compose(v -> budgetBackToZero(vertx, 200));
  }

  /** The last response's bytes are released when its write completes, a moment after the client has it. */
  private ConnectionLimits limits(Vertx vertx) {
    return DeploymentLimits.of(vertx, deploymentId);
  }

  private Future<Void> budgetBackToZero(Vertx vertx, int checksLeft) {
    long held = limits(vertx).budget().used();
    if (held == 0) {
      return Future.succeededFuture();
    }
    if (checksLeft == 0) {
      return Future.failedFuture("budget still holds " + held + " bytes");
    }
    return vertx.timer(10, TimeUnit.MILLISECONDS).compose(t -> budgetBackToZero(vertx, checksLeft - 1));
  }

  @Test
  void slowlorisConnectionsAreCutWhileANormalClientIsServed(Vertx vertx, VertxTestContext ctx) {
    int slow = 200;
    deploy(vertx, new JsonObject().put("frameTimeoutMs", 1000)).compose(port -> {
      List<RawConnection> trickling = new ArrayList<>();
      // When each slow connection sent its first byte: the server's frame clock starts after that.
      List<Long> firstByteNanos = new ArrayList<>();
      Future<Void> opened = Future.succeededFuture();
      for (int i = 0; i < slow; i++) {
        opened = opened.compose(v -> RawConnection.open(vertx, port).map(c -> {
          trickling.add(c);
          firstByteNanos.add(System.nanoTime());
          // One header byte now, another in 400 ms: trickling does not extend a frame's time.
          c.write(Buffer.buffer(new byte[] {5}));
          vertx.setTimer(400, t -> c.write(Buffer.buffer(new byte[] {0})));
          return null;
        }));
      }
      return opened
        .compose(v -> stillServing(vertx, port))
        .compose(v -> {
          // The normal client was answered; a slow connection already cut by then must have had its frameTimeoutMs. A
          // count of zero assumed that opening 200 connections and one echo take under a second: on a busy machine they
          // took longer (23 cut), which was the clock's doing, not the server's.
          long servedNanos = System.nanoTime();
          ctx.verify(() -> {
            for (int i = 0; i < trickling.size(); i++) {
              long heldMs = TimeUnit.NANOSECONDS.toMillis(servedNanos - firstByteNanos.get(i));
              assertTrue(!trickling.get(i).closed().isComplete() || heldMs >= 1000,
                "slow connection " + i + " was cut " + heldMs + " ms after its first byte, before frameTimeoutMs");
            }
          });
          return Future.all(trickling.stream().map(RawConnection::closed).toList());
        })
        .compose(v -> metrics.closed(CloseReason.FRAME_TIMEOUT, slow))
        .compose(v -> {
          ctx.verify(() -> {
            assertEquals(slow, metrics.closedFor(CloseReason.FRAME_TIMEOUT), "each slow connection cut for frameTimeoutMs");
            assertTrue(metrics.closeReasons().stream().allMatch(r -> r == CloseReason.FRAME_TIMEOUT || r == CloseReason.CLIENT_CLOSED),
              "no other reason: " + metrics.closeReasons());
          });
          return Future.all(trickling.stream().map(RawConnection::close).toList());
        })
        .compose(v -> recovered(vertx, port));
    }).onComplete(ctx.succeedingThenComplete());
  }

  /** An echo handler that completes {@code bigRequestSeen} when a 32 MiB request reaches it. */
  private static RequestHandler echoTelling(Promise<Void> bigRequestSeen) {
    return request -> {
      if (request.length() == 32 << 20) {
        bigRequestSeen.tryComplete();
      }
      return Future.succeededFuture(request);
    };
  }

  /** Tries to be served on each connection, one after another: which of them were answered. */
  static Future<List<Boolean>> servedInTurn(List<RawConnection> conns) {
    Future<Void> sequence = Future.succeededFuture();
    List<Boolean> outcome = new ArrayList<>();
    for (RawConnection c : conns) {
      sequence = sequence.compose(v -> tryServe(c).map(ok -> {
        outcome.add(ok);
        return null;
      }));
    }
    return sequence.map(v -> outcome);
  }

  /** Sends one frame; completes with true if it was answered, false if the server closed the connection. */
  static Future<Boolean> tryServe(RawConnection c) {
    return c.write(LengthField.DEFAULT.frame(Buffer.buffer("x"))).transform(ar -> c.expectFrames(1)).map(r -> true).otherwise(false);
  }

  @Test
  void floodBeyondMaxConnectionsIsTurnedAwayAndTheCountStaysRight(Vertx vertx, VertxTestContext ctx) {
    // Nobody gives way here: the behaviour under test is turning newcomers away.
    deploy(vertx, new JsonObject().put("maxConnections", 20).put("idleGiveWayMs", 0)).compose(port -> {
      List<Future<RawConnection>> opening = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        opening.add(RawConnection.open(vertx, port));
      }
      return Future.all(opening).compose(all -> {
        List<RawConnection> conns = all.list();
        return Future.all(conns.stream().map(HostileClientTest::tryServe).toList()).compose(results -> {
          List<RawConnection> served = new ArrayList<>();
          for (int i = 0; i < conns.size(); i++) {
            if (results.<Boolean>resultAt(i)) {
              served.add(conns.get(i));
            }
          }
          ctx.verify(() -> assertEquals(20, served.size(), "served up to maxConnections"));
          // Five leave; exactly five newcomers fit, the sixth does not.
          List<RawConnection> leaving = served.subList(0, 5);
          return metrics.rejected(Rejection.MAX_CONNECTIONS, 10)
            .map(v -> {
              ctx.verify(() -> {
                assertEquals(10, metrics.rejectedFor(Rejection.MAX_CONNECTIONS), "the ten over maxConnections turned away");
                // How often it is logged, whatever it says: the behaviour under test is the flood protection.
                long lines = limits(vertx).rejectionLog(Rejection.MAX_CONNECTIONS).lines();
                assertTrue(lines >= LogSummary.AT_ONCE && lines <= LogSummary.AT_ONCE + 1,
                  "the first lines at once, then a summary a second at most, not one per connection: " + lines);
              });
              return null;
            })
            .compose(v -> Future.all(leaving.stream().map(RawConnection::close).toList()))
            .compose(v -> metrics.closed(CloseReason.CLIENT_CLOSED, 5))
            .compose(v -> {
              List<Future<RawConnection>> more = new ArrayList<>();
              for (int i = 0; i < 6; i++) {
                more.add(RawConnection.open(vertx, port));
              }
              return Future.all(more);
            })
            .compose(more -> {
              List<RawConnection> newcomers = more.list();
              return servedInTurn(newcomers).map(outcome -> {
                ctx.verify(() -> assertEquals(List.of(true, true, true, true, true, false), outcome));
                List<RawConnection> everyone = new ArrayList<>(conns);
                everyone.addAll(newcomers);
                return everyone;
              });
            });
        }).compose(everyone -> Future.all(everyone.stream().map(RawConnection::close).toList()));
      }).compose(v -> metrics.closed(CloseReason.CLIENT_CLOSED, 25))
        .compose(v -> {
          ctx.verify(() -> {
            assertEquals(0, limits(vertx).openConnections(), "no connection left counted");
            assertEquals(11, metrics.rejectedFor(Rejection.MAX_CONNECTIONS), "and the sixth newcomer turned away");
            assertEquals(List.of(CloseReason.CLIENT_CLOSED), metrics.closeReasons().stream().distinct().toList(),
              "every connection served was closed by its client");
          });
          return recovered(vertx, port);
        });
    }).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void maxConnectionsPerIpCountsEachAddressApart(Vertx vertx, VertxTestContext ctx) {
    NetClientOptions fromOtherAddress = new NetClientOptions().setLocalAddress("127.0.0.2");
    deploy(vertx, new JsonObject().put("maxConnectionsPerIp", 2)).compose(port -> {
      List<Future<RawConnection>> opening = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        opening.add(RawConnection.open(vertx, port));
      }
      for (int i = 0; i < 2; i++) {
        opening.add(RawConnection.open(vertx, port, fromOtherAddress));
      }
      return Future.all(opening).compose(all -> {
        List<RawConnection> conns = all.list();
        return servedInTurn(conns).compose(outcome -> {
          ctx.verify(() -> assertEquals(List.of(true, true, false, true, true), outcome, "third from 127.0.0.1 refused"));
          return metrics.rejected(Rejection.MAX_CONNECTIONS_PER_IP, 1);
        }).compose(v -> {
          ctx.verify(() -> {
            assertEquals(1, metrics.rejectedFor(Rejection.MAX_CONNECTIONS_PER_IP));
            assertEquals(0, metrics.rejectedFor(Rejection.MAX_CONNECTIONS), "turned away for the per-address limit only");
          });
          return Future.all(conns.stream().map(RawConnection::close).toList());
        });
      }).compose(v -> metrics.closed(CloseReason.CLIENT_CLOSED, 4))
        .compose(v -> recovered(vertx, port));
    }).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void clientThatNeverReadsIsClosedAfterWriteStallTimeout(Vertx vertx, VertxTestContext ctx) {
    deploy(vertx, new JsonObject().put("writeStallTimeoutMs", 1000)).compose(port -> RawConnection.open(vertx, port)
      .compose(c -> {
        c.stopReading();
        int[] sent = {0};
        Runnable[] pump = new Runnable[1];
        pump[0] = () -> {
          while (!c.closed().isComplete() && sent[0] < 512 && !c.socket().writeQueueFull()) {
            c.write(LengthField.DEFAULT.frame(payload(1 << 20, sent[0]++)));
          }
          if (!c.closed().isComplete() && sent[0] < 512) {
            c.socket().drainHandler(v -> pump[0].run());
          }
        };
        pump[0].run();
        return c.closed()
          .compose(v -> metrics.closed(CloseReason.WRITE_STALL))
          .map(v -> {
            ctx.verify(() -> {
              assertEquals(List.of(CloseReason.WRITE_STALL), metrics.closeReasons());
              assertTrue(sent[0] < 512, "the client was held back before it could send everything");
            });
            return null;
          })
          .eventually(c::close);
      })
      .compose(v -> recovered(vertx, port)))
      .onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void garbageAndImpossibleHeadersEndOnlyTheirConnections(Vertx vertx, VertxTestContext ctx) {
    Buffer http = Buffer.buffer("GET / HTTP/1.1\r\nHost: frame-echo\r\n\r\n");
    Buffer maxed = Buffer.buffer(new byte[] {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 1, 2, 3});
    deploy(vertx, new JsonObject()).compose(port -> RawConnection.open(vertx, port).compose(bystander ->
      Future.all(List.of(http, maxed).stream().map(bytes -> RawConnection.open(vertx, port)
          .compose(c -> c.write(bytes).compose(v -> c.closed()).map(v -> c.received().size()).eventually(c::close))).toList())
        .compose(all -> metrics.closed(CloseReason.PROTOCOL_ERROR, 2).map(all))
        .compose(all -> {
          ctx.verify(() -> {
            assertEquals(List.of(0, 0), all.list(), "nothing answered");
            // "GET " read as a little-endian length is 542,393,671 bytes; 0xFFFFFFFF is 4 GiB: both over maxFrameSize.
            assertEquals(2, metrics.protocolErrors());
            assertEquals(List.of(CloseReason.PROTOCOL_ERROR, CloseReason.PROTOCOL_ERROR), metrics.closeReasons(),
              "those two connections only, the bystander is open");
          });
          return bystander.write(LengthField.DEFAULT.frame(Buffer.buffer("fine"))).compose(v -> bystander.expectFrames(1));
        })
        .eventually(bystander::close)
        .compose(v -> recovered(vertx, port))))
      .onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void resetsMidFrameAndMidResponseReleaseWhatTheyHeld(Vertx vertx, VertxTestContext ctx) {
    Promise<Void> bigRequestSeen = Promise.promise();
    RequestHandler echo = echoTelling(bigRequestSeen);
    NetClientOptions resetOnClose = new NetClientOptions().setSoLinger(0);
    deploy(vertx, new JsonObject(), echo).compose(d -> {
      int port = d.port;
      // Mid-frame: a header announcing 1 MiB, half the body, then a reset.
      Future<Void> midFrame = RawConnection.open(vertx, port, resetOnClose).compose(c ->
        c.write(Buffer.buffer().appendIntLE(1 << 20).appendBuffer(payload(1 << 19, 1)))
          .compose(v -> c.close())
          .compose(v -> metrics.closes(1))
          .map(v -> {
            // A reset inside a frame reaches the server as an end of input or as an error, as the kernel has it.
            ctx.verify(() -> assertTrue(Set.of(CloseReason.UNEXPECTED_EOF, CloseReason.IO_ERROR).contains(metrics.closeReasons().get(0)),
              metrics.closeReasons().toString()));
            return null;
          }));
      // Mid-response: a 32 MiB request, not read back, then a reset while the server writes.
      Future<Void> midResponse = midFrame.compose(v -> RawConnection.open(vertx, port, resetOnClose)).compose(c -> {
        c.stopReading();
        byte[] big = new byte[32 << 20];
        Arrays.fill(big, (byte) 'r');
        return c.write(LengthField.DEFAULT.frame(Buffer.buffer(big)))
          .compose(v -> bigRequestSeen.future())
          .compose(v -> c.close())
          .compose(v -> metrics.closes(2))
          .map(v -> {
            // Its request was whole: a reset reaches the server as the client's close or as an error.
            ctx.verify(() -> assertTrue(Set.of(CloseReason.CLIENT_CLOSED, CloseReason.IO_ERROR).contains(metrics.closeReasons().get(1)),
              metrics.closeReasons().toString()));
            return null;
          });
      });
      return midResponse.compose(v -> recovered(vertx, port));
    }).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void halfClosedClientReceivesEveryResponseIncludingA32MiBOne(Vertx vertx, VertxTestContext ctx) {
    byte[] big = new byte[32 << 20];
    Arrays.fill(big, (byte) 'z');
    List<Buffer> requests = List.of(Buffer.buffer("first"), Buffer.buffer(big), Buffer.buffer("last"));
    deploy(vertx, new JsonObject()).compose(port -> RawConnection.open(vertx, port).compose(c -> {
      return c.write(frames(requests))
        .compose(v -> {
          c.shutdownOutput();
          return c.expectFrames(3);
        })
        .compose(responses -> {
          ctx.verify(() -> assertEquals(requests, responses));
          return c.closed();
        })
        .compose(v -> metrics.closed(CloseReason.CLIENT_CLOSED))
        .map(v -> {
          ctx.verify(() -> assertEquals(List.of(CloseReason.CLIENT_CLOSED), metrics.closeReasons(), "an end at a frame boundary"));
          return null;
        })
        .eventually(c::close)
        .compose(v -> recovered(vertx, port));
    })).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void shutdownAnswersWhatWasReceivedAndCutsWhatCannotDrain(Vertx vertx, VertxTestContext ctx) {
    Promise<Void> bigRequestSeen = Promise.promise();
    RequestHandler echo = echoTelling(bigRequestSeen);
    deploy(vertx, new JsonObject().put("shutdownTimeoutMs", 1500), echo).compose(d -> {
      // A: one whole frame, then half of another; B: idle; C: a 32 MiB answer it never reads.
      Future<RawConnection> a = RawConnection.open(vertx, d.port).compose(c -> c.write(LengthField.DEFAULT.frame(Buffer.buffer("done"))
        .appendBuffer(Buffer.buffer().appendIntLE(10).appendString("abc"))).compose(v -> c.expectFrames(1)).map(c));
      Future<RawConnection> b = a.compose(v -> RawConnection.open(vertx, d.port));
      Future<RawConnection> cFuture = b.compose(v -> RawConnection.open(vertx, d.port)).compose(c -> {
        c.stopReading();
        byte[] big = new byte[32 << 20];
        return c.write(LengthField.DEFAULT.frame(Buffer.buffer(big))).compose(v -> bigRequestSeen.future()).map(c);
      });
      return cFuture.compose(c -> vertx.undeploy(d.id)
        .compose(v -> {
          // C notices the end only once it reads again.
          c.startReading();
          return Future.all(a.result().closed(), b.result().closed(), c.closed());
        })
        .compose(v -> metrics.closes(3))
        // The undeploy completed once the server had shut down, and logged its line: how many were drained and how
        // many cut is in that line alone (no event or meter counts them), so that much is read from it.
        .compose(v -> serverLog.await(Level.INFO, "shut down"))
        .compose(line -> {
          ctx.verify(() -> {
            assertTrue(line.endsWith(": 0 connection(s) drained, 1 closed idle, 1 lost a request, 1 cut"), line);
            assertEquals(List.of(Buffer.buffer("done")), a.result().received());
            assertEquals(List.of(CloseReason.SERVER_SHUTDOWN, CloseReason.SERVER_SHUTDOWN, CloseReason.SERVER_SHUTDOWN),
              metrics.closeReasons(), "all three ended by the shutdown, the one cut too");
          });
          return Future.all(a.result().close(), b.result().close(), c.close());
        }));
    }).onComplete(ctx.succeedingThenComplete());
  }

  /** Completes once the server counts {@code expected} open connections; checks every 20 ms. */
  private Future<Void> serverCounts(Vertx vertx, int expected, int checksLeft) {
    int open = limits(vertx).openConnections();
    if (open == expected) {
      return Future.succeededFuture();
    }
    if (checksLeft == 0) {
      return Future.failedFuture("the server counts " + open + " open connections, not " + expected);
    }
    return vertx.timer(20, TimeUnit.MILLISECONDS).compose(t -> serverCounts(vertx, expected, checksLeft - 1));
  }

  @Test
  void thousandsOfIdleConnectionsAreHeldThenAllAnswered(Vertx vertx, VertxTestContext ctx) {
    int count = 2000;
    List<RawConnection> conns = new ArrayList<>();
    AtomicInteger answered = new AtomicInteger();
    deploy(vertx, new JsonObject()).compose(port -> {
      Future<Void> opened = Future.succeededFuture();
      for (int batch = 0; batch < count / 200; batch++) {
        opened = opened.compose(v -> {
          List<Future<RawConnection>> some = new ArrayList<>();
          for (int i = 0; i < 200; i++) {
            some.add(RawConnection.open(vertx, port));
          }
          return Future.all(some).map(all -> {
            conns.addAll(all.list());
            return null;
          });
        });
      }
      // A client's connect completes at the handshake, a moment before the server's accept handler runs.
      return opened.compose(v -> serverCounts(vertx, count, 250)).compose(v -> {
        List<Future<Void>> all = new ArrayList<>();
        for (int i = 0; i < conns.size(); i++) {
          RawConnection c = conns.get(i);
          Buffer mine = Buffer.buffer("idle " + i);
          all.add(c.write(LengthField.DEFAULT.frame(mine)).compose(x -> c.expectFrames(1)).compose(r -> {
            answered.incrementAndGet();
            return r.get(0).equals(mine) ? Future.<Void>succeededFuture() : Future.<Void>failedFuture("wrong answer");
          }));
        }
        return Future.all(all);
      }).compose(v -> Future.all(conns.stream().map(RawConnection::close).toList()))
        .compose(v -> recovered(vertx, port));
    }).onComplete(ctx.succeeding(v -> ctx.verify(() -> {
      assertEquals(count, answered.get());
      ctx.completeNow();
    })));
  }

  /**
   * Six clients each send a 32 MiB frame and read nothing, against a 64 MiB budget: the server takes in
   * some frames and makes the others wait (nobody fails), holds no more than the budget plus the completion
   * reserve (one frame) and the reads in flight, and answers all six once the clients read.
   */
  @Test
  void bufferBudgetMakesConnectionsWaitInsteadOfGrowing(Vertx vertx, VertxTestContext ctx) {
    int clients = 6;
    int size = 32 << 20;
    AtomicInteger handled = new AtomicInteger();
    RequestHandler countingEcho = request -> {
      handled.incrementAndGet();
      return Future.succeededFuture(request);
    };
    deploy(vertx, new JsonObject().put("maxBufferedBytes", 64L << 20), countingEcho).compose(d -> {
      List<RawConnection> conns = new ArrayList<>();
      Future<Void> sent = Future.succeededFuture();
      for (int i = 0; i < clients; i++) {
        int n = i;
        sent = sent.compose(v -> RawConnection.open(vertx, d.port).map(c -> {
          conns.add(c);
          c.stopReading();
          byte[] bytes = new byte[size];
          Arrays.fill(bytes, (byte) ('a' + n));
          c.write(LengthField.DEFAULT.frame(Buffer.buffer(bytes)));
          return null;
        }));
      }
      return sent.compose(v -> Quiet.until(vertx, handled::get, 10)).compose(stalledAt -> {
        long peak = limits(vertx).budget().peak();
        ctx.verify(() -> {
          assertTrue(stalledAt >= 1 && stalledAt < clients, stalledAt + " frames taken in while the budget is spent");
          assertTrue(peak <= (64L << 20) + LengthField.DEFAULT.headerSize() + (32 << 20) + (1 << 20),
            "held " + peak + " bytes over a 64 MiB budget and its 32 MiB completion reserve");
        });
        List<Future<Void>> answered = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
          RawConnection c = conns.get(i);
          byte expected = (byte) ('a' + i);
          c.startReading();
          answered.add(c.expectFrames(1).compose(r -> r.get(0).length() == size && r.get(0).getByte(size - 1) == expected
            ? Future.<Void>succeededFuture() : Future.<Void>failedFuture("wrong answer")));
        }
        return Future.all(answered);
      }).compose(v -> Future.all(conns.stream().map(RawConnection::close).toList()))
        .compose(v -> recovered(vertx, d.port));
    }).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void idleConnectionIsClosedWhileAnActiveOneIsNot(Vertx vertx, VertxTestContext ctx) {
    deploy(vertx, new JsonObject().put("idleTimeoutMs", 600)).compose(port -> RawConnection.open(vertx, port)
      .compose(idle -> RawConnection.open(vertx, port).compose(active -> {
        // The active client sends a request every 200 ms for 1.5 s: never 600 ms without one.
        Future<Void> talking = Future.succeededFuture();
        for (int i = 0; i < 8; i++) {
          int n = i;
          talking = talking.compose(v -> vertx.timer(200, TimeUnit.MILLISECONDS))
            .compose(t -> active.write(LengthField.DEFAULT.frame(Buffer.buffer("ping " + n))))
            .compose(v -> active.expectFrames(n + 1)).mapEmpty();
        }
        return talking.compose(v -> {
          ctx.verify(() -> {
            assertTrue(idle.closed().isComplete(), "the idle connection was closed");
            assertTrue(!active.closed().isComplete(), "the active one was not");
          });
          return metrics.closed(CloseReason.IDLE_TIMEOUT).map(x -> {
            ctx.verify(() -> assertEquals(List.of(CloseReason.IDLE_TIMEOUT), metrics.closeReasons(), "the idle one alone"));
            return null;
          });
        }).eventually(() -> Future.all(idle.close(), active.close()));
      }))
      .compose(v -> recovered(vertx, port)))
      .onComplete(ctx.succeedingThenComplete());
  }

  /** Vert.x's own idle timeout would close connections without their responses or a close reason: refused at start. */
  @Test
  void vertxsOwnIdleTimeoutIsRefused(Vertx vertx, VertxTestContext ctx) {
    deploy(vertx, new JsonObject().put("netServerOptions", new JsonObject().put("idleTimeout", 1)))
      .onComplete(ctx.failing(e -> ctx.verify(() -> {
        assertTrue(e.getMessage().startsWith("invalid frame-echo configuration: netServerOptions.idleTimeout: refused: "), e.getMessage());
        ctx.completeNow();
      })));
  }

  /**
   * Large frames pipelined by a client that does not read: the server holds about one response being
   * written and one frame being read, not a queue of responses (Vert.x's own queue counts messages, not
   * bytes, so the server watches the channel's byte-based writability).
   */
  @Test
  void largeFramesFromAClientThatDoesNotReadAreHeldToAboutTwoFrames(Vertx vertx, VertxTestContext ctx) {
    int size = 8 << 20;
    int count = 24;
    AtomicInteger handled = new AtomicInteger();
    RequestHandler countingEcho = request -> {
      handled.incrementAndGet();
      return Future.succeededFuture(request);
    };
    deploy(vertx, new JsonObject(), countingEcho).compose(d -> RawConnection.open(vertx, d.port).compose(c -> {
      c.stopReading();
      int[] checked = {0};
      Promise<Void> allBack = Promise.promise();
      c.onFrame(frame -> {
        if (frame.length() != size || frame.getByte(0) != (byte) checked[0]) {
          allBack.tryFail("response " + checked[0] + " is not its request");
        } else if (++checked[0] == count) {
          allBack.tryComplete();
        }
      });
      for (int i = 0; i < count; i++) {
        byte[] bytes = new byte[size];
        Arrays.fill(bytes, (byte) i);
        c.write(LengthField.DEFAULT.frame(Buffer.buffer(bytes)));
      }
      return Quiet.until(vertx, handled::get, 10).compose(stalledAt -> {
        long peak = limits(vertx).budget().peak();
        ctx.verify(() -> {
          assertTrue(stalledAt < count, "the server stopped taking frames in");
          assertTrue(peak <= 2L * size + FrameEchoOptions.DEFAULT_WRITE_QUEUE_MAX_SIZE,
            "held " + peak + " bytes for one connection of " + size + "-byte frames");
        });
        c.startReading();
        return allBack.future();
      }).eventually(c::close).compose(v -> recovered(vertx, d.port));
    })).onComplete(ctx.succeedingThenComplete());
  }

}
