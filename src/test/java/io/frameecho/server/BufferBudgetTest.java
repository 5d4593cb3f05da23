package io.frameecho.server;

import ch.qos.logback.classic.Level;
import io.frameecho.protocol.Frames;
import io.frameecho.server.impl.Connection;
import io.frameecho.server.impl.ConnectionLimits;
import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.RawConnection;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static io.frameecho.server.FrameEchoServerTest.payload;
import static io.frameecho.server.FrameEchoServerTest.stillServing;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The buffer budget counts bytes held, not bytes promised: headers alone hold nothing, stalled partial
 * frames are evicted when others wait, clients that want many times the budget at full speed all finish,
 * and a slow but steady uploader is left alone. After every case the budget is back to zero.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class BufferBudgetTest {

  private static final String EVICTED = "evicted for the buffer budget";

  @RegisterExtension
  final LogCapture connectionLog = LogCapture.of(Connection.class);
  private String deploymentId;

  private Future<Integer> deploy(Vertx vertx, JsonObject config) {
    FrameEchoVerticle verticle = new FrameEchoVerticle(new EchoHandler());
    JsonObject c = new JsonObject().put("host", "127.0.0.1").put("port", 0).mergeIn(config);
    return vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(c)).map(id -> {
      deploymentId = id;
      return verticle.actualPort();
    });
  }

  private ConnectionLimits limits(Vertx vertx) {
    return ConnectionLimits.find(vertx, deploymentId);
  }

  /** Completes once {@code condition} holds, checked every 10 ms, or fails after {@code checksLeft} checks. */
  private static Future<Void> until(Vertx vertx, String what, BooleanSupplier condition, int checksLeft) {
    if (condition.getAsBoolean()) {
      return Future.succeededFuture();
    }
    if (checksLeft == 0) {
      return Future.failedFuture("never: " + what);
    }
    return vertx.timer(10, TimeUnit.MILLISECONDS).compose(t -> until(vertx, what, condition, checksLeft - 1));
  }

  /** A fresh client served, every staller closed by the client, and no byte left held. */
  private Future<Void> recovered(Vertx vertx, int port, List<RawConnection> others) {
    return Future.all(others.stream().map(RawConnection::close).toList())
      .compose(v -> stillServing(vertx, port))
      .compose(v -> until(vertx, "the budget back to zero", () -> limits(vertx).budget().used() == 0, 500));
  }

  /** Sends one frame of {@code size} bytes; completes with the milliseconds until its echo was back, checked. */
  private static Future<Long> roundTrip(Vertx vertx, int port, int size) {
    Buffer mine = payload(size, size);
    return RawConnection.open(vertx, port).compose(c -> {
      long start = System.nanoTime();
      return c.write(Frames.frame(mine)).compose(v -> c.expectFrames(1)).compose(r -> {
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        return r.get(0).equals(mine) ? Future.succeededFuture(ms) : Future.<Long>failedFuture("wrong echo");
      }).eventually(c::close);
    });
  }

  private static Future<List<RawConnection>> openAll(Vertx vertx, int port, int count) {
    List<Future<RawConnection>> opening = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      opening.add(RawConnection.open(vertx, port));
    }
    return Future.all(opening).map(all -> all.<RawConnection>list());
  }

  /**
   * The first figure: 94 bare headers (64 declaring 32 MiB, then two of every power of two down to
   * 1 KiB: 376 bytes declaring 2.1 GiB) hold 376 bytes, and a fresh client's 4 KiB frame is answered at once.
   */
  @Test
  void bareHeadersHoldNothingAndAFreshClientIsServed(Vertx vertx, VertxTestContext ctx) {
    List<Integer> declared = new ArrayList<>();
    for (int i = 0; i < 64; i++) {
      declared.add(32 << 20);
    }
    for (int size = 16 << 20; size >= 1 << 10; size >>= 1) {
      declared.add(size);
      declared.add(size);
    }
    deploy(vertx, new JsonObject()).compose(port -> openAll(vertx, port, declared.size()).compose(headers -> {
      for (int i = 0; i < headers.size(); i++) {
        headers.get(i).write(Buffer.buffer().appendIntLE(declared.get(i)));
      }
      return until(vertx, "94 headers read", () -> limits(vertx).budget().used() == 4L * declared.size(), 500)
        .compose(v -> roundTrip(vertx, port, 4 << 10))
        .compose(ms -> {
          System.out.println("FIGURE bare headers: " + declared.size() + " headers, a fresh 4 KiB frame answered in "
            + ms + " ms; budget " + limits(vertx).budget().limit() + ", peak " + limits(vertx).budget().peak());
          ctx.verify(() -> {
            assertEquals(94, declared.size());
            assertTrue(ms < 1500, "a fresh 4 KiB frame took " + ms + " ms beside bare headers");
            assertEquals(0, connectionLog.count(Level.INFO, EVICTED), "headers hold nothing worth evicting");
          });
          return recovered(vertx, port, headers);
        });
    })).onComplete(ctx.succeedingThenComplete());
  }

  /** 100 connections declare 32 MiB and send 1 KiB against a 64 MiB budget: they hold 100 KiB, a 24-byte frame passes. */
  @Test
  void framesAnnouncedButBarelySentHoldOnlyWhatWasSent(Vertx vertx, VertxTestContext ctx) {
    int count = 100;
    deploy(vertx, new JsonObject().put("maxBufferedBytes", 64L << 20)).compose(port -> openAll(vertx, port, count).compose(conns -> {
      for (RawConnection c : conns) {
        c.write(Buffer.buffer().appendIntLE(32 << 20).appendBuffer(payload(1 << 10, 1)));
      }
      long sent = count * (4L + (1 << 10));
      return until(vertx, "100 partial frames read", () -> limits(vertx).budget().used() == sent, 500)
        .compose(v -> roundTrip(vertx, port, 24))
        .compose(ms -> {
          System.out.println("FIGURE announced, barely sent: " + count + " x 1 KiB of 32 MiB, a fresh 24-byte frame answered in "
            + ms + " ms; peak " + limits(vertx).budget().peak());
          ctx.verify(() -> {
            assertTrue(ms < 1500, "a fresh 24-byte frame took " + ms + " ms");
            assertEquals(0, limits(vertx).budget().waiting(), "nobody waits: " + sent + " bytes are held");
          });
          return recovered(vertx, port, conns);
        });
    })).onComplete(ctx.succeedingThenComplete());
  }

  /**
   * The second figure: over a 64 MiB budget, 14 clients each send 7 MiB of an 8 MiB frame and
   * stall. A fresh client's 1 MiB frame is answered within about a second, and stallers are
   * evicted, each with one INFO line.
   */
  @Test
  void stalledPartialFramesAreEvictedForAFreshClient(Vertx vertx, VertxTestContext ctx) {
    int stallers = 14;
    deploy(vertx, new JsonObject().put("maxBufferedBytes", 64L << 20)).compose(port ->
      openAll(vertx, port, stallers).compose(stalled -> {
        for (RawConnection c : stalled) {
          c.write(Buffer.buffer().appendIntLE(8 << 20).appendBuffer(payload(7 << 20, 7)));
        }
        return until(vertx, "the budget spent", () -> limits(vertx).budget().waiting() > 0, 1000)
          .compose(v -> roundTrip(vertx, port, 1 << 20))
          .compose(ms -> connectionLog.await(Level.INFO, EVICTED).map(line -> {
            long peak = limits(vertx).budget().peak();
            System.out.println("FIGURE stalled partial frames: a fresh 1 MiB frame answered in " + ms + " ms; peak "
              + peak + " of " + (64L << 20) + "; " + connectionLog.count(Level.INFO, EVICTED) + " evicted so far, the first: " + line);
            ctx.verify(() -> {
              assertTrue(ms < 1500, "a fresh 1 MiB frame took " + ms + " ms beside stalled partial frames");
              assertTrue(line.contains("made no progress") && line.contains("budgetGraceMs"), line);
              assertTrue(peak <= (64L << 20) + FrameEchoOptions.DEFAULT_MAX_FRAME_SIZE + (4 << 20),
                "held " + peak + " bytes: more than the budget plus one frame and the reads in flight");
            });
            return null;
          }))
          .compose(v -> recovered(vertx, port, stalled));
      })).onComplete(ctx.succeedingThenComplete());
  }

  /**
   * A staller can take the completion reserve (it was the first to pause) and then stop sending. With a
   * grace of 20 s, the fresh client's 1 MiB frame, nearest to completion, still gets the reserve within a
   * few of the budget's checks, long before any staller could be evicted.
   */
  @Test
  void aStalledReserveHolderHandsTheReserveToAFreshClientLongBeforeItsGrace(Vertx vertx, VertxTestContext ctx) {
    int stallers = 14;
    deploy(vertx, new JsonObject().put("maxBufferedBytes", 64L << 20).put("budgetGraceMs", 20_000)).compose(port ->
      openAll(vertx, port, stallers).compose(stalled -> {
        for (RawConnection c : stalled) {
          c.write(Buffer.buffer().appendIntLE(8 << 20).appendBuffer(payload(7 << 20, 7)));
        }
        return until(vertx, "the budget spent", () -> limits(vertx).budget().waiting() > 0, 1000)
          .compose(v -> roundTrip(vertx, port, 1 << 20))
          .map(ms -> {
            System.out.println("FIGURE reserve handed on: a fresh 1 MiB frame answered in " + ms + " ms beside "
              + stallers + " stalled 8 MiB frames, budgetGraceMs 20000");
            ctx.verify(() -> {
              assertTrue(ms < 5000, "a fresh 1 MiB frame took " + ms + " ms: the reserve was not handed on");
              assertEquals(0, connectionLog.count(Level.INFO, EVICTED), "nobody is evicted within the grace");
            });
            return null;
          })
          .compose(v -> recovered(vertx, port, stalled));
      })).onComplete(ctx.succeedingThenComplete());
  }

  /**
   * Tricklers are never stalled: three clients send all but 1,000 bytes of a 32 MiB frame, more than a
   * 64 MiB budget together, then one byte every 150 ms. The one holding the reserve reads too little to keep
   * it, and a fresh client's 4 KiB frame is answered within about a second, not when frameTimeoutMs ends
   * the tricklers.
   */
  @Test
  void tricklersDoNotKeepTheReserveFromAFreshClient(Vertx vertx, VertxTestContext ctx) {
    int size = 32 << 20;
    List<Long> timers = new ArrayList<>();
    deploy(vertx, new JsonObject().put("maxBufferedBytes", 64L << 20)).compose(port ->
      openAll(vertx, port, 3).compose(tricklers -> {
        for (RawConnection c : tricklers) {
          c.write(Buffer.buffer().appendIntLE(size).appendBuffer(payload(size - 1000, 3)));
        }
        return until(vertx, "the tricklers' bytes held", () -> limits(vertx).budget().used() > (64L << 20)
            && limits(vertx).budget().waiting() > 0, 1000)
          .compose(v -> {
            for (RawConnection c : tricklers) {
              timers.add(vertx.setPeriodic(150, id -> c.write(Buffer.buffer(new byte[] {'t'}))));
            }
            return vertx.timer(1, TimeUnit.SECONDS);
          })
          .compose(v -> roundTrip(vertx, port, 4096))
          .map(ms -> {
            System.out.println("FIGURE tricklers: a fresh 4 KiB frame answered in " + ms + " ms beside 3 tricklers");
            ctx.verify(() -> assertTrue(ms < 1500, "a fresh 4 KiB frame took " + ms + " ms beside tricklers"));
            return null;
          })
          .eventually(() -> {
            timers.forEach(vertx::cancelTimer);
            return Future.succeededFuture();
          })
          .compose(v -> recovered(vertx, port, tricklers));
      })).onComplete(ctx.succeedingThenComplete());
  }

  /**
   * Eight clients at full speed, two 4 MiB frames each, want four times a 16 MiB budget: all finish
   * byte-exact, nobody is evicted, and the budget holds at most its limit plus one frame plus reads in flight.
   */
  @Test
  void fullSpeedClientsWantingFourTimesTheBudgetAllFinish(Vertx vertx, VertxTestContext ctx) {
    int clients = 8;
    int size = 4 << 20;
    long budget = 16L << 20;
    deploy(vertx, new JsonObject().put("maxBufferedBytes", budget)).compose(port -> openAll(vertx, port, clients).compose(conns -> {
      long start = System.nanoTime();
      List<Future<Void>> done = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        RawConnection c = conns.get(i);
        Buffer first = payload(size, 2L * i);
        Buffer second = payload(size, 2L * i + 1);
        c.write(Frames.frame(first).appendBuffer(Frames.frame(second)));
        done.add(c.expectFrames(2).compose(r -> r.equals(List.of(first, second))
          ? Future.<Void>succeededFuture() : Future.<Void>failedFuture("wrong echo")));
      }
      return Future.all(done).compose(v -> {
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        long peak = limits(vertx).budget().peak();
        System.out.println("FIGURE full speed: " + clients + " clients x 2 x 4 MiB over a 16 MiB budget done in " + ms
          + " ms; peak " + peak + " of " + budget);
        ctx.verify(() -> {
          assertEquals(0, connectionLog.count(Level.INFO, EVICTED), "clients at full speed are never evicted");
          assertTrue(peak <= budget + FrameEchoOptions.DEFAULT_MAX_FRAME_SIZE + (4 << 20), "held " + peak + " bytes");
        });
        return recovered(vertx, port, conns);
      });
    })).onComplete(ctx.succeedingThenComplete());
  }

  /**
   * Ten stallers (7 MiB of 8 MiB each) spend a 64 MiB budget while a slow but steady uploader sends a 2 MiB
   * frame in 64 KiB pieces every 100 ms (3.2 s, longer than the grace): it is paused at times, never
   * evicted, and gets its echo; stallers are evicted meanwhile.
   */
  @Test
  void aSlowButSteadyUploaderBesideStallersIsNotEvicted(Vertx vertx, VertxTestContext ctx) {
    int stallers = 10;
    int size = 2 << 20;
    int piece = 64 << 10;
    deploy(vertx, new JsonObject().put("maxBufferedBytes", 64L << 20)).compose(port ->
      openAll(vertx, port, stallers).compose(stalled -> {
        for (RawConnection c : stalled) {
          c.write(Buffer.buffer().appendIntLE(8 << 20).appendBuffer(payload(7 << 20, 7)));
        }
        return until(vertx, "the budget spent", () -> limits(vertx).budget().waiting() > 0, 1000)
          .compose(v -> RawConnection.open(vertx, port))
          .compose(uploader -> {
            String me = uploader.socket().localAddress().toString();
            Buffer frame = Frames.frame(payload(size, 42));
            Future<Void> sent = Future.succeededFuture();
            for (int off = 0; off < frame.length(); off += piece) {
              Buffer part = frame.getBuffer(off, Math.min(frame.length(), off + piece));
              sent = sent.compose(v -> vertx.timer(100, TimeUnit.MILLISECONDS)).compose(t -> uploader.write(part));
            }
            Promise<List<Buffer>> echoed = Promise.promise();
            uploader.expectFrames(1).onComplete(echoed);
            return sent.compose(v -> echoed.future()).compose(r -> {
              System.out.println("FIGURE steady uploader: echoed beside " + stallers + " stallers; "
                + connectionLog.count(Level.INFO, EVICTED) + " evicted; peak " + limits(vertx).budget().peak());
              ctx.verify(() -> {
                assertEquals(frame.getBuffer(Frames.HEADER_SIZE, frame.length()), r.get(0), "the echo, byte-exact");
                assertEquals(0, connectionLog.count(Level.INFO, me + " closing"), "the steady uploader was not evicted");
                assertTrue(connectionLog.count(Level.INFO, EVICTED) >= 1, "stallers were evicted");
              });
              List<RawConnection> all = new ArrayList<>(stalled);
              all.add(uploader);
              return recovered(vertx, port, all);
            });
          });
      })).onComplete(ctx.succeedingThenComplete());
  }
}
