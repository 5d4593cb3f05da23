package io.frameecho.server.impl.shared;

import io.frameecho.protocol.Frames;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The budget of bytes held, shared by every connection of a deployment on every event loop; each connection deals
 * with it through its {@link BudgetAccount}. Its rules (OPERATING.md states them for operators):
 * <ol>
 *   <li>Bytes count from the read that brings them until the response that carries them is written, or their
 *   connection closes. A frame that arrives whole in one read asks nothing more.</li>
 *   <li>A frame that spans reads and holds more than a small read is admitted for the rest its header announced: counted
 *   at once, it then reads freely to its end. It is admitted at once when nobody waits and it fits under the limit.</li>
 *   <li>Otherwise its connection waits; so does one that reads while anyone waits or the budget is over (for one small
 *   read). Waiters are admitted by turns, the newest and the oldest: each when it fits under the limit, or, one frame at
 *   a time, within one frame past it (whatever its size when nothing but waiters holds the budget).</li>
 *   <li>While anyone waits: an admitted frame the server let read that has gone a grace without reading
 *   {@value BudgetAccount#MIN_PROGRESS} bytes is evicted; while the budget is over, a connection the
 *   server paused for its responses is cut if its client reads none ({@code Connection#evictIfNotReading}).</li>
 *   <li>While the budget is over its limit, reads are small ({@link BudgetAccount#readCap}).</li>
 * </ol>
 * An admitted frame completes unless its client stalls, so waiting needs no other way out; the newest's turn means
 * waiters gone quiet ahead of a fresh frame cost it one grace, not one each; the oldest's, that none is passed for ever.
 */
public final class BufferBudget {

  private final long limit;
  /** The most one frame may take past the limit. */
  private final long frameCap;
  private final long graceMs;
  private final long graceNanos;
  /** How often the check runs while anyone waits: a tenth of the grace, within 10 to 100 ms. */
  private final long checkMs;
  private final Ticker ticker;
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

  // Under this budget's lock.
  /** Waiters, oldest first. */
  private final TreeMap<Long, BudgetAccount> queue = new TreeMap<>();
  private long tickets;
  /** Bytes waiters hold: nothing releases them until they are admitted or close. */
  private long heldByWaiters;
  private boolean oldestsTurn;
  private boolean checking;

  /** A budget whose check reads the time and sets its timer through {@code ticker}. */
  public BufferBudget(long limit, int maxFrameSize, long graceMs, Ticker ticker) {
    this.limit = limit;
    this.frameCap = (long) maxFrameSize + Frames.HEADER_SIZE;
    this.graceMs = graceMs;
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

  /** Connections waiting to be admitted. */
  public int waiting() {
    return waiting;
  }

  public boolean over() {
    return used.get() > limit;
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
      if (waiting > 0) {
        tell(admittable(), null);
      }
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
    List<BudgetAccount> admitted = admittable();
    tell(admitted, account);
    return admitted.contains(account) ? takeGrant(account) : -1;
  }

  /** A read already under way when {@code account} paused: what it holds while it waits grows. */
  synchronized void heldWhileWaiting(BudgetAccount account, long bytes) {
    if (account.ticket != 0) {
      account.heldWaiting += bytes;
      heldByWaiters += bytes;
    }
  }

  /** {@code account} closes while waiting: it leaves the queue, and a grant it has not taken comes back. */
  void leave(BudgetAccount account) {
    synchronized (this) {
      dequeue(account);
    }
    long grant = takeGrant(account);
    if (pastLimit.compareAndSet(account, null) | grant > 0) {
      used.addAndGet(-grant);
      if (waiting > 0) {
        tell(admittable(), null);
      }
    }
  }

  /** {@code account}'s admission ended (its frame completed, its one read was read, or it closed). */
  void admissionEnded(BudgetAccount account) {
    if (pastLimit.get() == account && pastLimit.compareAndSet(account, null) && waiting > 0) {
      tell(admittable(), null);
    }
  }

  synchronized long takeGrant(BudgetAccount account) {
    long granted = account.granted;
    account.granted = 0;
    return granted;
  }

  private void dequeue(BudgetAccount account) {
    if (account.ticket != 0 && queue.remove(account.ticket) != null) {
      heldByWaiters -= account.heldWaiting;
      waiting = queue.size();
    }
    account.ticket = 0;
  }

  /** Admits and counts waiters by turns while the one whose turn it is may be admitted; they are told after the lock. */
  private synchronized List<BudgetAccount> admittable() {
    List<BudgetAccount> admitted = new ArrayList<>(0);
    while (!queue.isEmpty()) {
      BudgetAccount next = (oldestsTurn ? queue.firstEntry() : queue.lastEntry()).getValue();
      long now = used.get();
      boolean onlyWaitersHold = now <= heldByWaiters;
      // One small read never takes the place past the limit: it may be a client that sends nothing more.
      boolean fits = now + next.need <= limit || next.need == 0 && onlyWaitersHold;
      boolean pastIt = !fits && next.need > 0 && pastLimit.get() == null
        && (now + next.need <= limit + frameCap || onlyWaitersHold);
      if (!fits && !pastIt) {
        break;
      }
      dequeue(next);
      oldestsTurn = !oldestsTurn;
      if (pastIt) {
        pastLimit.set(next);
      }
      reserve(next.need);
      next.granted = next.need;
      admitted.add(next);
    }
    return admitted;
  }

  private static void tell(List<BudgetAccount> admitted, BudgetAccount asking) {
    for (BudgetAccount account : admitted) {
      if (account != asking) {
        account.admitted();
      }
    }
  }

  /** Rule 4, every {@link #checkMs} while anyone waits. */
  private void check() {
    List<BudgetAccount> stalled = new ArrayList<>();
    List<BudgetAccount> paused = new ArrayList<>();
    synchronized (this) {
      if (queue.isEmpty()) {
        checking = false;
        return;
      }
      ticker.schedule(checkMs, this::check);
      long now = ticker.nanoTime();
      for (BudgetAccount account : accounts.values()) {
        if (account.frameStalled(now, graceNanos)) {
          stalled.add(account);
        } else if (over() && account.askAboutItsReader(now, graceNanos)) {
          paused.add(account);
        }
      }
    }
    int waiters = waiting;
    stalled.forEach(account -> account.evictIfStalled(graceMs, waiters, used.get(), limit));
    paused.forEach(account -> account.evictIfNotReading(graceMs, waiters, used.get(), limit));
  }
}
