package io.frameecho.server.impl.connection;

import io.frameecho.server.CloseReason;
import io.frameecho.server.impl.connection.EchoHandler;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.RequestHandler;
import io.frameecho.server.RequestLoss;
import io.frameecho.server.impl.shared.BufferBudget;
import io.frameecho.server.impl.shared.LogSummary;
import io.frameecho.testkit.RecordingMetrics;
import io.frameecho.testkit.VirtualTicker;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.SocketAddress;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * One run: the real connection core (each {@link Connection} with its parser, answers, writer, read pause and clocks, and one
 * shared {@link BufferBudget}) for a crowd of {@link SimClient}s over {@link SimSocket}s, on a {@link VirtualTicker} and
 * {@link SimLoops}, every choice drawn from one seeded {@link Random}. Each step is one of: a loop runs its next task,
 * a loop looks at its sockets (reads, FINs, resets), a client acts, or the clock ticks (and the clients that act on
 * ticks act). The invariants are checked after every step; then the clients leave, the clock passes every linger and
 * timeout, and what must be released is checked.
 */
final class Simulation {

  /** Trace lines kept for a failure's report. */
  static final int TRACE_LINES = 60;
  /** Connections of earlier runs' clients get no slot back once the run ends. */
  private static final int COME_BACK_PERCENT = 60;

  /** What a run found. */
  record Result(SimConfig config, SimulationFailure failure, List<String> trace, long worstWellBehavedWaitMs,
                long fingerprint, long virtualMs, long peakUsed, int connectionsOpened) {
  }

  private final SimConfig config;
  private final FrameEchoOptions options;
  private final Random random;
  private final VirtualTicker ticker = new VirtualTicker();
  private final SimLoops loops;
  private final SimReads reads = new SimReads();
  private final RecordingMetrics metrics = new RecordingMetrics();
  private final LogSummary logs = new LogSummary(ticker);
  private final List<ActivityOrder> orders = new ArrayList<>();
  private final BufferBudget budget;
  /** Clients whose connection has not closed yet, and every client of the run. */
  private final List<SimClient> live = new ArrayList<>();
  private final List<SimClient> all = new ArrayList<>();
  private final Map<SimClient, Integer> closedCalls = new IdentityHashMap<>();
  private final List<Integer> comingBack = new ArrayList<>();
  private int handlersRun;
  private int mostOpen;
  private boolean leaving;
  private long worstWaitMs;
  /** A failed run is being closed down: what its connections do now is not checked. */
  private boolean tearingDown;
  /** The step at which the server shuts down (-1: it does not); once it has, nothing is accepted. */
  private final long shutdownStep;
  private boolean shutDown;
  private long shutdownDeadline = -1;
  /** Request losses the metrics had reported when the last connection closed: the rest are the next one's. */
  private int lossesSeen;

  private final String[] trace = new String[TRACE_LINES];
  private long lines;
  private long fingerprint = 17;
  private long step;

  Simulation(SimConfig config) {
    this.config = config;
    this.options = config.options();
    this.random = new Random(config.seed() * 0xD1B54A32D192ED03L + 1);
    this.loops = new SimLoops(config.loops());
    for (int i = 0; i < config.loops(); i++) {
      orders.add(new ActivityOrder(ticker, 60_000));
    }
    budget = new BufferBudget(config.maxBufferedBytes(), config.budgetGraceMs(), ticker);
    shutdownStep = config.shutdownAtPercent() < 0 ? -1 : (long) config.steps() * config.shutdownAtPercent() / 100;
  }

  static Result run(SimConfig config) {
    return new Simulation(config).run();
  }

  private Result run() {
    SimulationFailure failure = null;
    try {
      for (int slot = 0; slot < config.connections(); slot++) {
        open(slot);
      }
      for (step = 0; step < config.steps(); step++) {
        if (step == shutdownStep) {
          shutdown();
        }
        step();
        checkEveryStep();
      }
      leave();
      checkAtEnd();
    } catch (SimulationFailure e) {
      failure = e;
      tearDown();
    } finally {
      reads.releaseAll();
    }
    for (SimClient client : all) {
      if (client.wellBehaved()) {
        worstWaitMs = Math.max(worstWaitMs, client.worstWaitMs());
      }
    }
    List<String> last = new ArrayList<>();
    for (long i = Math.max(0, lines - TRACE_LINES); i < lines; i++) {
      last.add(trace[(int) (i % TRACE_LINES)]);
    }
    return new Result(config, failure, last, worstWaitMs, fingerprint, (ticker.nanoTime() - 1_000_000_000L) / 1_000_000,
      budget.peak(), all.size());
  }

  // ---- connections ----

  private void open(int slot) {
    int id = all.size();
    int loop = random.nextInt(loops.count());
    SimSocket socket = new SimSocket(id, loop, config, ticker, reads, random, loops.executor(loop));
    SimClient client = new SimClient(slot, SimClient.randomBehaviour(random), socket, config, ticker, random);
    Connection connection = new Connection(SocketAddress.inetSocketAddress(10_000 + id, "127.0.0.1"), options, metrics,
      logs, orders.get(loop), c -> closed(client));
    socket.attach(connection);
    socket.successor(() -> shutDown && config.handover());
    live.add(client);
    all.add(client);
    closedCalls.put(client, 0);
    connection.start(socket, handler(loop), budget, loops.executor(loop), ticker);
    mostOpen = Math.max(mostOpen, live.size());
    trace("connection " + id + " opens on loop " + loop + " for client " + slot + " (" + client.behaviour + ")");
  }

  /** Echo mostly; the application handler answers each payload reversed, at once or after a random delay, on its loop. */
  private RequestHandler handler(int loop) {
    if (!config.application()) {
      return new EchoHandler();
    }
    return request -> {
      byte[] payload = request.getBytes();
      byte[] reversed = new byte[payload.length];
      for (int i = 0; i < payload.length; i++) {
        reversed[i] = payload[payload.length - 1 - i];
      }
      if (random.nextInt(10) < 3) {
        return Future.succeededFuture(Buffer.buffer(reversed));
      }
      Promise<Buffer> answer = Promise.promise();
      ticker.schedule(random.nextInt(SimConfig.APPLICATION_DELAY_MS + 1),
        () -> loops.executor(loop).execute(() -> answer.complete(Buffer.buffer(reversed))));
      return answer.future();
    };
  }

  /** The closed handler: counted, checked, and the slot's client may come back with a new connection. */
  private void closed(SimClient client) {
    handlersRun++;
    int calls = closedCalls.merge(client, 1, Integer::sum);
    List<CloseReason> reasons = metrics.closeReasons();
    CloseReason reason = reasons.isEmpty() ? null : reasons.get(reasons.size() - 1);
    trace("connection " + client.socket.id + " closed: " + reason + (client.socket.handedOver() ? ", handed over" : ""));
    live.remove(client);
    if (tearingDown) {
      return;
    }
    List<RequestLoss> losses = metrics.requestsLost();
    List<RequestLoss> its = losses.subList(lossesSeen, losses.size());
    lossesSeen = losses.size();
    SimInvariants.oneCloseReasonEach(client, calls, metrics, handlersRun);
    SimInvariants.wellBehavedNotClosedByServer(client, reason, shutDown);
    if (client.socket.handedOver()) {
      SimInvariants.handedOverHoldsNothing(client, its);
    } else {
      SimInvariants.lossCounted(client, reason, its);
    }
    if (shutDown && live.isEmpty() && shutdownDeadline >= 0) {
      ticker.cancel(shutdownDeadline);
      shutdownDeadline = -1;
    }
    if (!leaving && !shutDown && random.nextInt(100) < COME_BACK_PERCENT) {
      comingBack.add(client.slot);
    }
  }

  /**
   * The server shuts down as {@code FrameEchoServerImpl} does: each open connection is told on its loop (a task, so
   * it meets reads and answers in any order, as the pacer's batches do); after {@link SimConfig#SHUTDOWN_TIMEOUT_MS}
   * what is still open is cut. Nothing is accepted after.
   */
  private void shutdown() {
    shutDown = true;
    trace("the server shuts down");
    for (SimClient client : live) {
      loops.executor(client.socket.loop).execute(() -> client.socket.connection().shutdownRequested());
    }
    shutdownDeadline = ticker.schedule(SimConfig.SHUTDOWN_TIMEOUT_MS, () -> {
      shutdownDeadline = -1;
      trace("shutdown's deadline");
      for (SimClient client : new ArrayList<>(live)) {
        loops.executor(client.socket.loop).execute(() -> {
          if (!client.socket.closedDelivered()) {
            client.socket.connection().cut();
          }
        });
      }
    });
  }

  // ---- the scheduler ----

  private void step() {
    int pick = random.nextInt(12);
    int tickWeight = leaving ? 4 : 1;
    if (pick < 4) {
      int loop = loops.runOne(random);
      if (loop >= 0) {
        trace("loop " + loop + " runs a task");
      }
    } else if (pick < 8) {
      lookAtSockets(random.nextInt(loops.count()));
    } else if (pick < 12 - tickWeight) {
      if (!live.isEmpty()) {
        SimClient client = live.get(random.nextInt(live.size()));
        String did = leaving ? client.leavingAct() : client.act();
        if (did != null && !did.isEmpty()) {
          trace("client " + client.slot + " (" + client.behaviour + ", connection " + client.socket.id + "):" + did);
        }
      }
    } else {
      tick(1 + random.nextInt(config.maxTickMs()));
    }
    for (Integer slot : comingBack) {
      open(slot);
    }
    comingBack.clear();
  }

  /** One look of a loop at its sockets, in order: each reads once, or sees a FIN or a reset. */
  private void lookAtSockets(int loop) {
    for (SimClient client : new ArrayList<>(live)) {
      if (client.socket.loop == loop) {
        String did = client.socket.ioStep();
        if (did != null) {
          trace("loop " + loop + " connection " + client.socket.id + ": " + did);
        }
      }
    }
  }

  /**
   * The clock moves on: first every loop runs what it has queued and looks at each of its sockets once (an event loop
   * does that in far less than a millisecond), then the time passes, then the clients that act on ticks act.
   */
  private void tick(int ms) {
    loops.runAll(random, 1_000_000);
    for (int loop = 0; loop < loops.count(); loop++) {
      lookAtSockets(loop);
    }
    loops.runAll(random, 1_000_000);
    ticker.advance(ms);
    trace("tick " + ms + " ms");
    for (SimClient client : new ArrayList<>(live)) {
      String did = leaving ? client.leavingAct() : client.actsOnTicks() ? client.tick() : null;
      if (did != null && !did.isEmpty()) {
        trace("client " + client.slot + " (" + client.behaviour + ", connection " + client.socket.id + ") at the tick:" + did);
      }
    }
  }

  private void checkEveryStep() {
    SimInvariants.answersExactAndInOrder(live);
    SimInvariants.heldWithinBound(budget, config, live.size(), mostOpen);
    SimInvariants.wellBehavedAnsweredInTime(live, config, mostOpen);
    SimInvariants.noConnectionOutlivesItsClocks(live, config);
  }

  // ---- the end ----

  /**
   * Every client leaves: readers shut down their side and read what they are owed, non-readers reset. The run goes on
   * (ticks more often) until every connection has closed or the clock has passed every linger and timeout twice.
   */
  private void leave() {
    leaving = true;
    trace("the clients leave");
    for (SimClient client : live) {
      client.leave();
    }
    long start = ticker.nanoTime();
    long boundNanos = 2_000_000L * (config.frameTimeoutMs() + config.writeStallTimeoutMs() + config.lingerTimeoutMs()
      + config.budgetGraceMs()) + 10_000_000_000L;
    while (!live.isEmpty() && ticker.nanoTime() - start < boundNanos) {
      step++;
      step();
      checkEveryStep();
    }
    // Then the clock passes what may legitimately stay armed once every connection has closed: a log summary's timer
    // (at most two intervals: the window, then one summary line) and the budget's check (one more look after the last
    // waiter left). A connection's own timers must be gone already: none is waited out.
    long settleMs = 2 * LogSummary.INTERVAL_MS + 500;
    for (long ms = 0; ms < settleMs; ms += 100) {
      tick(100);
      checkEveryStep();
    }
    loops.runAll(random, 1_000_000);
  }

  /** After a failure: every connection still open is closed, so that what it holds is released (no leak reported). */
  private void tearDown() {
    tearingDown = true;
    for (SimClient client : new ArrayList<>(live)) {
      client.socket.closeNow();
    }
    loops.runAll(random, 1_000_000);
  }

  private void checkAtEnd() {
    SimInvariants.answersExactAndInOrder(all);
    SimInvariants.everythingReleased(all, budget, reads, ticker, loops);
  }

  private void trace(String what) {
    String line = "t=" + (ticker.nanoTime() - 1_000_000_000L) / 1_000_000 + "ms step " + step + " used=" + budget.used()
      + " waiting=" + budget.waiting() + ": " + what;
    trace[(int) (lines++ % TRACE_LINES)] = line;
    fingerprint = fingerprint * 31 + line.hashCode();
  }
}
