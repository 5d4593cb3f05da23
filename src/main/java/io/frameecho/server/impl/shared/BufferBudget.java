package io.frameecho.server.impl.shared;

import io.frameecho.protocol.Frames;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The bytes held by every connection of a deployment, on every event loop, each through its {@link BudgetAccount}.
 * Its five rules are OPERATING.md's ("The buffer budget"): bytes count from read to written; a frame that spans reads
 * and holds a small read or more is admitted for the rest its header announced, at once if nobody waits and it fits;
 * otherwise, or when a connection reads while anyone waits or the budget is over, it waits, and waiters are admitted by
 * turns, the newest and the oldest, each when it fits beside what is held but by waiters, or, one frame at a time,
 * within one frame past the limit; while anyone waits, an admitted frame that goes a grace without reading
 * {@value BudgetAccount#MIN_PROGRESS} bytes is evicted, and connections the server paused are asked whether their
 * clients read; while anyone waits or the budget is over, reads are small. Waiters hold a small read or two each, which
 * nothing but their admission releases, so they do not count against it: no deadlock. The newest's turn keeps waiters
 * gone quiet from costing a fresh frame a grace each; the oldest's, any waiter from waiting for ever.
 */
public final class BufferBudget {

  private final long limit;
  /** The most one frame may take past the limit. */
  private final long frameCap;
  private final long graceNanos;
  /** How often the check runs while anyone waits: a tenth of the grace, within 10 to 100 ms. */
  private final long checkMs;
  final Ticker ticker;
  /** Bytes held, and the bytes admitted frames have still to read. */
  private final AtomicLong used = new AtomicLong();
  /** The most ever held; written without a lock, so it may trail a concurrent peak by one read. */
  private volatile long peak;
  /** The accounts the check looks at (admitted a frame, or paused by the server, once), in the order they came. */
  private final ConcurrentSkipListMap<Long, BudgetAccount> accounts = new ConcurrentSkipListMap<>();
  private final AtomicLong watched = new AtomicLong();
  /** The account admitted past the limit, or null: set under the lock, cleared by its account. */
  private final AtomicReference<BudgetAccount> pastLimit = new AtomicReference<>();
  private volatile int waiting;

  /** What waiters hold (a small read or two each): not counted against admissions, as nothing else releases it. */
  private volatile long heldByWaiters;

  // Under this budget's lock: the waiters, oldest first.
  private final TreeMap<Long, BudgetAccount> queue = new TreeMap<>();
  private long tickets;
  private boolean oldestsTurn;
  private boolean checking;

  /** A budget whose check reads the time and sets its timer through {@code ticker}. */
  public BufferBudget(long limit, int maxFrameSize, long graceMs, Ticker ticker) {
    this.limit = limit;
    this.frameCap = (long) maxFrameSize + Frames.HEADER_SIZE;
    this.graceNanos = graceMs * 1_000_000;
    this.checkMs = Math.max(10, Math.min(100, graceMs / 10));
    this.ticker = ticker;
  }

  public long limit() {
    return limit;
  }

  public long used() {
    return used.get();
  }

  public long peak() {
    return peak;
  }

  public int waiting() {
    return waiting;
  }

  /** What admitted frames, responses and readers hold is over the limit. */
  public boolean over() {
    return used.get() - heldByWaiters > limit;
  }

  /** Counts bytes held whatever the budget says. */
  public void reserve(long bytes) {
    long now = used.addAndGet(bytes);
    if (now > peak) {
      peak = now;
    }
  }

  public void release(long bytes) {
    if (bytes != 0) {
      used.addAndGet(-bytes);
      admitWaiters(null);
    }
  }

  /** Rule 2: true, and counted, when nobody waits and {@code need} fits under the limit. */
  boolean admitNow(long need) {
    for (long now = used.get(); waiting == 0 && now + need <= limit; now = used.get()) {
      if (used.compareAndSet(now, now + need)) {
        return true;
      }
    }
    return false;
  }

  /** Looked at by the check from now on; returns the key to {@link #unwatch} it with. */
  long watch(BudgetAccount account) {
    long key = watched.incrementAndGet();
    accounts.put(key, account);
    return key;
  }

  void unwatch(long key) {
    accounts.remove(key);
  }

  /**
   * Rule 3: {@code account}, holding {@code held} bytes, waits to be admitted for {@code need} more (0: one small read).
   * Returns what it was granted when its turn came at once, else -1: it is told once admitted.
   */
  long await(BudgetAccount account, long need, long held) {
    synchronized (this) {
      account.ticket = ++tickets;
      account.need = need;
      account.heldWaiting = held;
      queue.put(account.ticket, account);
      heldByWaiters += held;
      waiting = queue.size();
      if (!checking) {
        checking = true;
        ticker.schedule(checkMs, this::check);
      }
    }
    return admitWaiters(account) ? need : -1;
  }

  /** {@code account} closes while waiting: it leaves the queue (a grant on its way to it is handed back by its loop). */
  synchronized void leave(BudgetAccount account) {
    if (account.ticket != 0) {
      dequeue(account);
    }
  }

  /** {@code account}'s admission ended (its frame completed, its one read was read, or it closed). */
  void admissionEnded(BudgetAccount account) {
    if (pastLimit.get() == account && pastLimit.compareAndSet(account, null)) {
      admitWaiters(null);
    }
  }

  private void dequeue(BudgetAccount account) {
    queue.remove(account.ticket);
    heldByWaiters -= account.heldWaiting;
    waiting = queue.size();
    account.ticket = 0;
  }

  /**
   * Admits waiters by turns while the one whose turn it is may go on, and tells each but {@code asking} once the lock
   * is let go; returns whether {@code asking} was admitted.
   */
  private boolean admitWaiters(BudgetAccount asking) {
    if (waiting == 0) {
      return false;
    }
    List<BudgetAccount> admitted = new ArrayList<>(0);
    synchronized (this) {
      while (!queue.isEmpty()) {
        BudgetAccount next = (oldestsTurn ? queue.firstEntry() : queue.lastEntry()).getValue();
        long now = used.get() - heldByWaiters;
        boolean fits = now + next.need <= limit;
        // One small read never goes past the limit: its client may send nothing more for long.
        boolean pastIt = !fits && next.need > 0 && pastLimit.get() == null && now + next.need <= limit + frameCap;
        if (!fits && !pastIt) {
          break;
        }
        dequeue(next);
        oldestsTurn = !oldestsTurn;
        if (pastIt) {
          pastLimit.set(next);
        }
        reserve(next.need);
        admitted.add(next);
      }
    }
    for (BudgetAccount account : admitted) {
      if (account != asking) {
        account.admitted(account.need);
      }
    }
    return admitted.contains(asking);
  }

  /** Rule 4, every {@link #checkMs} while anyone waits. */
  private synchronized void check() {
    if (queue.isEmpty()) {
      checking = false;
      return;
    }
    ticker.schedule(checkMs, this::check);
    long now = ticker.nanoTime();
    for (BudgetAccount account : accounts.values()) {
      if (!account.frameStalled(now, graceNanos) && over()) {
        account.askIfPaused(now, graceNanos);
      }
    }
  }
}
