package io.frameecho.server.impl.connection;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Executor;

/**
 * The simulated event loops: one FIFO queue of tasks each, as Vert.x runs a context's tasks in order. Which loop runs
 * its next task is the scheduler's (seeded) choice; nothing runs on another thread.
 */
final class SimLoops {

  private final List<ArrayDeque<Runnable>> queues = new ArrayList<>();

  SimLoops(int loops) {
    for (int i = 0; i < loops; i++) {
      queues.add(new ArrayDeque<>());
    }
  }

  int count() {
    return queues.size();
  }

  /** The executor a connection on {@code loop} is given: its task runs later, in order, on that loop. */
  Executor executor(int loop) {
    return task -> queues.get(loop).add(task);
  }

  boolean idle() {
    for (ArrayDeque<Runnable> queue : queues) {
      if (!queue.isEmpty()) {
        return false;
      }
    }
    return true;
  }

  /** Runs the next task of a loop chosen at random among those with work; returns that loop, or -1 when all are idle. */
  int runOne(Random random) {
    int busy = 0;
    for (ArrayDeque<Runnable> queue : queues) {
      busy += queue.isEmpty() ? 0 : 1;
    }
    if (busy == 0) {
      return -1;
    }
    int pick = random.nextInt(busy);
    for (int loop = 0; loop < queues.size(); loop++) {
      if (!queues.get(loop).isEmpty() && pick-- == 0) {
        queues.get(loop).poll().run();
        return loop;
      }
    }
    throw new IllegalStateException();
  }

  /** Runs tasks, in the scheduler's order, until every loop is idle (tasks may queue more); at most {@code max}. */
  void runAll(Random random, int max) {
    for (int i = 0; i < max && runOne(random) >= 0; i++) {
      // each iteration ran one task
    }
  }
}
