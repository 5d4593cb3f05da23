package io.frameecho.testkit;

import io.frameecho.server.impl.shared.Ticker;

import java.util.PriorityQueue;
import java.util.concurrent.TimeUnit;

/**
 * A {@link Ticker} whose time moves only when the test says: {@link #advance} runs every task that falls due,
 * in time order (a task scheduled by a task runs too if it falls due within the advance). Not thread-safe:
 * one test thread drives it.
 */
public final class VirtualTicker implements Ticker {

  private record Task(long dueNanos, long id, Runnable action) {
  }

  private final PriorityQueue<Task> tasks = new PriorityQueue<>((a, b) ->
    a.dueNanos != b.dueNanos ? Long.compare(a.dueNanos, b.dueNanos) : Long.compare(a.id, b.id));
  private long nanos = 1_000_000_000L;
  private long nextId;

  @Override
  public long nanoTime() {
    return nanos;
  }

  @Override
  public long schedule(long delayMs, Runnable task) {
    long id = nextId++;
    tasks.add(new Task(nanos + TimeUnit.MILLISECONDS.toNanos(delayMs), id, task));
    return id;
  }

  @Override
  public void cancel(long id) {
    tasks.removeIf(t -> t.id == id);
  }

  /** Moves time on by {@code ms}, running each task as its time comes. */
  public void advance(long ms) {
    long end = nanos + TimeUnit.MILLISECONDS.toNanos(ms);
    Task next;
    while ((next = tasks.peek()) != null && next.dueNanos <= end) {
      tasks.poll();
      nanos = Math.max(nanos, next.dueNanos);
      next.action.run();
    }
    nanos = end;
  }

  /** Tasks scheduled and not yet run or cancelled. */
  public int pending() {
    return tasks.size();
  }
}
