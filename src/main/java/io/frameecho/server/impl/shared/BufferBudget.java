package io.frameecho.server.impl.shared;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes held by all of a deployment's connections, each through its {@link BudgetAccount}; the rules are in
 * OPERATING.md, "The buffer budget". Waiters' small reads are not counted against the limit, since only their
 * admission can release them, which avoids deadlock. Waiters are admitted alternately newest and oldest, so quiet
 * waiters cannot delay fresh frames and none starves; while over, stalled frames are evicted only as far as the limit
 * needs, so room returns steadily rather than in waves.
 */
public final class BufferBudget {

  private final long limit;
  private final long graceNanos;
  /** Check period while anyone waits: a tenth of the grace, within 10 to 100 ms. */
  private final long checkMs;
  final Ticker ticker;
  /** Bytes held plus bytes admitted frames have yet to read. */
  private final AtomicLong used = new AtomicLong();
  /** The most ever held; updated without a lock, so it may trail a concurrent peak. */
  private volatile long peak;
  private volatile int waiting;
  /** Bytes held by waiters, excluded from the limit because only their admission releases them. */
  private volatile long heldByWaiters;

  // Guarded by this: watched accounts in arrival order, and waiters keyed by ticket, oldest first.
  private final Set<BudgetAccount> accounts = new LinkedHashSet<>();
  private final TreeMap<Long, BudgetAccount> queue = new TreeMap<>();
  private long tickets;
  private boolean oldestsTurn;
  private boolean checking;

  /** A budget whose stall check runs on {@code ticker}. */
  public BufferBudget(long limit, long graceMs, Ticker ticker) {
    this.limit = limit;
    this.graceNanos = graceMs * 1_000_000;
    this.checkMs = Math.max(10, Math.min(100, graceMs / 10));
    this.ticker = ticker;
  }

  /** The configured limit in bytes. */
  public long limit() {
    return limit;
  }

  /** Bytes currently counted. */
  public long used() {
    return used.get();
  }

  /** The most bytes ever counted. */
  public long peak() {
    return peak;
  }

  /** Accounts waiting for admission. */
  public int waiting() {
    return waiting;
  }

  /** Whether non-waiters hold more than the limit. */
  public boolean over() {
    return used.get() - heldByWaiters > limit;
  }

  /** Counts bytes held, regardless of the limit. */
  public void reserve(long bytes) {
    long now = used.addAndGet(bytes);
    if (now > peak) {
      peak = now;
    }
  }

  /** Releases {@code bytes} and admits waiters that now fit. */
  public void release(long bytes) {
    if (bytes != 0) {
      used.addAndGet(-bytes);
      admitWaiters(null);
    }
  }

  /** Counts {@code delta} more bytes, or fewer. */
  public void change(long delta) {
    if (delta > 0) {
      reserve(delta);
    } else {
      release(-delta);
    }
  }

  synchronized void watch(BudgetAccount account) {
    accounts.add(account);
  }

  synchronized void unwatch(BudgetAccount account) {
    accounts.remove(account);
  }

  /** Admits {@code account} for {@code need} more bytes (0: one small read), or queues it and returns false. */
  boolean admit(BudgetAccount account, long need, long held) {
    synchronized (this) {
      if (queue.isEmpty() && !over()) {
        reserve(need);
        return true;
      }
      account.place = need > 0 && account.place != 0 ? account.place : ++tickets;
      account.queued = true;
      account.need = need;
      account.heldWaiting = held;
      queue.put(account.place, account);
      heldByWaiters += held;
      waiting = queue.size();
      if (!checking) {
        checking = true;
        ticker.schedule(checkMs, this::check);
      }
    }
    return admitWaiters(account);
  }

  /** Removes a closing account from the queue; a grant already on its way is returned by its loop. */
  synchronized void leave(BudgetAccount account) {
    if (account.queued) {
      dequeue(account);
    }
  }

  private void dequeue(BudgetAccount account) {
    queue.remove(account.place);
    heldByWaiters -= account.heldWaiting;
    waiting = queue.size();
    account.queued = false;
  }

  /** Admits waiters alternately while not over, notifying all but {@code asking}; returns whether it was admitted. */
  private boolean admitWaiters(BudgetAccount asking) {
    if (waiting == 0) {
      return false;
    }
    List<BudgetAccount> admitted = new ArrayList<>(0);
    synchronized (this) {
      while (!queue.isEmpty() && !over()) {
        BudgetAccount next = (oldestsTurn ? queue.firstEntry() : queue.lastEntry()).getValue();
        oldestsTurn = !oldestsTurn;
        dequeue(next);
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

  /** Runs periodically while anyone waits, evicting stalled frames in arrival order while over. */
  private synchronized void check() {
    if (queue.isEmpty()) {
      checking = false;
      return;
    }
    ticker.schedule(checkMs, this::check);
    long now = ticker.nanoTime();
    long excess = used.get() - heldByWaiters - limit;
    for (BudgetAccount account : accounts) {
      if (excess > 0) {
        excess -= account.look(now, graceNanos);
      }
    }
  }
}
