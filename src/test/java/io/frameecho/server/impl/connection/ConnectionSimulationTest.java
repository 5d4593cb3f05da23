package io.frameecho.server.impl.connection;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The deterministic simulation of the connection core ({@link Simulation}): a fixed set of seeds by default;
 * {@code -Dsimulation.seeds=N} runs N more random seeds (printed), {@code -Dsimulation.seed=S} replays one (with
 * {@code -Dsimulation.connections} and {@code -Dsimulation.steps} as a shrunk failure printed them). A failure prints
 * the seed, its configuration, the smallest failing run the shrink found, its last trace lines, and the command that
 * replays it. {@code -Dsimulation.stopAtFirstFailure=true} stops at the first failing seed (to see which seed catches a
 * defect first).
 */
class ConnectionSimulationTest {

  /** The default seeds: 0 to DEFAULT_SEEDS - 1. */
  static final int DEFAULT_SEEDS = 200;

  /**
   * TODO(#37): default seeds the current budget fails, each with the invariant it breaks; the budget's rewrite is to
   * empty this. They still run: one that passes, or fails otherwise, fails the test (so the list stays true).
   */
  static final Map<Long, String> KNOWN_BUDGET_FAILURES = Map.of();

  private Logger connectionLog;
  private Level connectionLevel;

  @BeforeEach
  void quiet() {
    // Evictions and timeouts are logged at INFO, rate-limited per cause; thousands of virtual seconds would still flood.
    connectionLog = (Logger) LoggerFactory.getLogger(ConnectionLog.LOGGER);
    connectionLevel = connectionLog.getLevel();
    connectionLog.setLevel(Level.WARN);
  }

  @AfterEach
  void loud() {
    connectionLog.setLevel(connectionLevel);
  }

  @Test
  void seeds() {
    String one = System.getProperty("simulation.seed");
    List<Long> seeds = new ArrayList<>();
    if (one != null) {
      seeds.add(Long.parseLong(one));
    } else {
      for (long seed = 0; seed < DEFAULT_SEEDS; seed++) {
        seeds.add(seed);
      }
      int more = Integer.getInteger("simulation.seeds", 0);
      Random fresh = new Random();
      for (int i = 0; i < more; i++) {
        long seed = fresh.nextLong();
        System.out.println("simulation: random seed " + seed);
        seeds.add(seed);
      }
    }
    Integer connections = Integer.getInteger("simulation.connections");
    Integer steps = Integer.getInteger("simulation.steps");
    long started = System.nanoTime();
    List<Simulation.Result> results = new ArrayList<>();
    List<String> failures = new ArrayList<>();
    for (long seed : seeds) {
      Simulation.Result result = Simulation.run(SimConfig.of(seed, connections, steps));
      results.add(result);
      String known = one == null ? KNOWN_BUDGET_FAILURES.get(seed) : null;
      if (known != null) {
        String failed = result.failure() == null ? "passes" : result.failure().invariant;
        System.out.println("simulation: known budget failure, seed " + seed + ": " + (result.failure() == null ? "passes"
          : result.failure().getMessage()));
        if (!failed.equals(known)) {
          failures.add("seed " + seed + " was a known failure of " + known + ", now " + failed
            + ": update KNOWN_BUDGET_FAILURES");
        }
      } else if (result.failure() != null) {
        failures.add(report(shrink(result)));
        if (Boolean.getBoolean("simulation.stopAtFirstFailure")) {
          break;
        }
      }
    }
    summarise(results, System.nanoTime() - started);
    if (!failures.isEmpty()) {
      fail(failures.size() + " of " + seeds.size() + " runs failed:\n" + String.join("\n", failures));
    }
  }

  @Test
  void aSeedReplaysTheSameRun() {
    SimConfig config = SimConfig.of(7, null, null);
    assertEquals(Simulation.run(config).fingerprint(), Simulation.run(config).fingerprint(), "the trace of seed 7 twice");
  }

  /**
   * The smallest failing run found by rerunning the seed with fewer connections and fewer steps, keeping a run that
   * fails with the same invariant.
   */
  private static Simulation.Result shrink(Simulation.Result failed) {
    Simulation.Result best = failed;
    boolean smaller = true;
    while (smaller) {
      smaller = false;
      SimConfig c = best.config();
      List<SimConfig> tries = new ArrayList<>();
      if (c.connections() > 1) {
        tries.add(SimConfig.of(c.seed(), c.connections() / 2, c.steps()));
        tries.add(SimConfig.of(c.seed(), c.connections() - 1, c.steps()));
      }
      if (c.steps() > 10) {
        tries.add(SimConfig.of(c.seed(), c.connections(), c.steps() / 2));
        tries.add(SimConfig.of(c.seed(), c.connections(), c.steps() * 3 / 4));
      }
      for (SimConfig attempt : tries) {
        Simulation.Result result = Simulation.run(attempt);
        if (result.failure() != null && result.failure().invariant.equals(failed.failure().invariant)) {
          best = result;
          smaller = true;
          break;
        }
      }
    }
    return best;
  }

  private static String report(Simulation.Result result) {
    StringBuilder out = new StringBuilder();
    out.append("simulation FAILED: ").append(result.failure().getMessage()).append('\n');
    out.append("  config: ").append(result.config()).append('\n');
    out.append("  last ").append(result.trace().size()).append(" trace lines of the shrunk run:\n");
    for (String line : result.trace()) {
      out.append("    ").append(line).append('\n');
    }
    out.append("  replay: ").append(result.config().replayCommand()).append('\n');
    System.out.println(out);
    return out.toString();
  }

  private static void summarise(List<Simulation.Result> results, long nanos) {
    long failed = results.stream().filter(r -> r.failure() != null).count();
    System.out.printf("simulation: %d runs (%d failed) in %.1f s, %d virtual s, %d connections%n", results.size(), failed,
      nanos / 1e9, results.stream().mapToLong(Simulation.Result::virtualMs).sum() / 1000,
      results.stream().mapToInt(Simulation.Result::connectionsOpened).sum());
    results.stream().sorted(Comparator.comparingLong(Simulation.Result::worstWellBehavedWaitMs).reversed()).limit(5)
      .forEach(r -> System.out.println("simulation: worst well-behaved answer wait " + r.worstWellBehavedWaitMs()
        + " ms: " + r.config()));
  }
}
