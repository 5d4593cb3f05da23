package io.frameecho.server.impl.shared;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes held by every connection of a deployment, on every event loop, each through its {@link BudgetAccount}.
 * Its rules are OPERATING.md's ("The buffer budget"): a frame that spans reads asks to be admitted for the rest its
 * header announced, a connection that reads while anyone waits or the budget is over for one small read; admitted at
 * once when nobody waits and the budget is not over, else by turns, the newest and the oldest, while it is not over;
 * while it is over and anyone waits, admitted frames that went a grace without reading
 * {@value BudgetAccount#MIN_PROGRESS} bytes are evicted, first come first, as far as the limit needs. Why: waiters hold
 * a small read or two each, which only their admission releases, so the limit does not count them (no deadlock); the
 * newest's turn keeps waiters gone quiet from costing a fresh frame a grace each, the oldest's keeps any waiter from
 * waiting for ever; evicting only as far as needed gives room back a frame at a time, not in waves a grace apart.
 */
public final class BufferBudget {

  private final long limit;
  private final long graceNanos;
  /** How often the check runs while anyone waits: a tenth of the grace, within 10 to 100 ms. */
  private final long checkMs;
  final Ticker ticker;
  /** Bytes held, and the bytes admitted frames have still to read. */
  private final AtomicLong used = new AtomicLong();
  /** The most ever held; written without a lock, so it may trail a concurrent peak by one read. */
  private volatile long peak;
  private volatile int waiting;
  /** What waiters hold: not counted against the limit, as nothing but their admission releases it. */
  private volatile long heldByWaiters;

  // Under this budget's lock: the accounts the check looks at (admitted a frame, or paused by the server, once), in
  // the order they came; the waiters, oldest first.
  private final Set<BudgetAccount> accounts = new LinkedHashSet<>();
  private final TreeMap<Long, BudgetAccount> queue = new TreeMap<>();
  private long tickets;
  private boolean oldestsTurn;
  private boolean checking;

  /** A budget whose check reads the time and sets its timer through {@code ticker}. */
  public BufferBudget(long limit, long graceMs, Ticker ticker) {
    this.limit = limit;
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

  /** Counts {@code delta} more bytes held, or fewer. */
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

  /**
   * {@code account}, holding {@code held} bytes, asks to be admitted for {@code need} more (0: one small read): at once
   * when nobody waits and the budget is not over, else it waits. Returns true when admitted now; else it is told.
   */
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

  /** {@code account} closes while waiting: it leaves the queue (a grant on its way to it is handed back by its loop). */
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

  /** Admits waiters by turns while the budget is not over, tells each but {@code asking}; true if it was admitted. */
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

  /** Every {@link #checkMs} while anyone waits: looks at the accounts, first come first, while the budget is over. */
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
