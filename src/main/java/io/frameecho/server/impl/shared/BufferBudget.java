package io.frameecho.server.impl.shared;

import io.frameecho.protocol.Frames;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The process-wide budget of bytes <em>held</em>, shared by every connection on every event loop; each
 * connection deals with it through its {@link BudgetAccount}. The rules (OPERATING.md states them for operators):
 * <ol>
 *   <li>Bytes count from the read that brings them until the response that carries them is written, or their
 *   connection closes. A frame that arrives whole in one read asks nothing more.</li>
 *   <li>A frame that spans reads is <em>admitted</em> for the bytes its header still announces: they are counted at
 *   once, and its connection then reads freely to the frame's end. Admission is granted at once when nobody waits
 *   and the frame fits under the limit (one compare-and-set).</li>
 *   <li>Otherwise the connection pauses and waits; so does one that reads while anyone waits or while the budget is
 *   over its limit (it asks for one small read). Waiters are admitted by turns, the newest frame and the oldest,
 *   each when it fits under the limit, or when no other frame is past the limit and it fits within one frame past
 *   it (or nothing but waiting frames is held).</li>
 *   <li>While anyone waits, an admitted frame the server lets read that reads less than {@value BudgetAccount#MIN_PROGRESS} bytes
 *   in a grace ({@code budgetGraceMs}) is evicted; and a connection whose held responses have not moved for a grace
 *   is asked whether its client reads them at all (it is cut if not).</li>
 *   <li>While the budget is over its limit, reads are small ({@code BudgetAccount#readCap}).</li>
 * </ol>
 * An admitted frame always completes unless its client stalls, so waiting needs no other way out; and the newest
 * frame's turn means waiters that went quiet ahead of a fresh frame cost it one grace, not one each. Bytes held are
 * at most the limit, plus one frame, plus the reads that carried the budget past its limit (one full read, then one
 * small read per connection).
 */
public final class BufferBudget {

  private final long limit;
  /** The most one frame may take past the limit: a whole frame, header included. */
  private final long frameCap;
  private final long graceNanos;
  private final long graceMs;
  private final Ticker ticker;
  /** Bytes held, plus the bytes admitted frames are still to read. */
  private final AtomicLong used = new AtomicLong();
  /** The most ever held at once; updated without a lock, so it may trail a concurrent peak by one read. */
  private volatile long peak;
  /** Accounts to look at while anyone waits: those that were admitted a frame or hold responses. */
  private final Set<BudgetAccount> accounts = ConcurrentHashMap.newKeySet();

  // Under this budget's lock: the queue, in the order frames began to wait (newest last), and the turns.
  private final TreeMap<Long, BudgetAccount> queue = new TreeMap<>();
  private volatile int waiting;
  private long tickets;
  /** Bytes held by waiting connections, which nothing releases until they are admitted or close. */
  private long heldByWaiters;
  /** The one account whose frame was admitted past the limit, or null (set under the lock, cleared by a CAS). */
  private final AtomicReference<BudgetAccount> pastLimit = new AtomicReference<>();
  private boolean oldestsTurn;
  private boolean watching;

  /** A budget whose eviction check reads the time and sets its timer through {@code ticker}. */
  public BufferBudget(long limit, int maxFrameSize, long graceMs, Ticker ticker) {
    this.limit = limit;
    this.frameCap = (long) maxFrameSize + Frames.HEADER_SIZE;
    this.graceMs = graceMs;
    this.graceNanos = TimeUnit.MILLISECONDS.toNanos(graceMs);
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

  /** Connections paused until the budget admits them. */
  public int waiting() {
    return waiting;
  }

  /** More is held than the limit. Read from any thread. */
  public boolean over() {
    return used.get() > limit;
  }

  // ---- counting: one atomic add per read, one per response written ----

  /** Counts bytes held whatever the budget says (read, or an application's response). */
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
        admitWaiters();
      }
    }
  }

  /** Rule 2: admitted at once when nobody waits and {@code need} fits under the limit. */
  boolean admitNow(long need) {
    for (long now = used.get(); waiting == 0 && now + need <= limit; now = used.get()) {
      if (used.compareAndSet(now, now + need)) {
        return true;
      }
    }
    return false;
  }

  /** Accounts the check looks at while anyone waits. */
  void watch(BudgetAccount account) {
    accounts.add(account);
  }

  void unwatch(BudgetAccount account) {
    accounts.remove(account);
  }

  // ---- waiting: rule 3 ----

  /**
   * {@code account}, holding {@code held} bytes, asks to be admitted for {@code need} more: -1 when it must wait (it is
   * told when it is admitted), else what it was granted at once (its turn had come and it fits).
   */
  long await(BudgetAccount account, long need, long held) {
    synchronized (this) {
      account.ticket = ++tickets;
      account.need = need;
      account.heldWaiting = held;
      queue.put(account.ticket, account);
      heldByWaiters += held;
      waiting = queue.size();
      if (!watching) {
        watching = true;
        ticker.schedule(graceMs, this::check);
      }
    }
    List<BudgetAccount> admitted = admittable();
    long grant = -1;
    for (int i = 0; i < admitted.size(); i++) {
      BudgetAccount next = admitted.get(i);
      if (next == account) {
        grant = takeGrant(account);
      } else {
        next.admitted();
      }
    }
    return grant;
  }

  /**
   * {@code account} closes: it leaves the queue; an admission granted and not taken yet, and the slot past the limit,
   * come back.
   */
  void leave(BudgetAccount account) {
    long granted;
    synchronized (this) {
      dequeue(account);
      granted = account.granted;
      account.granted = 0;
    }
    pastLimit.compareAndSet(account, null);
    used.addAndGet(-granted);
    if (waiting > 0) {
      admitWaiters();
    }
  }

  /** {@code account} read {@code bytes} while it waited (a read already under way when it paused). */
  synchronized void heldWhileWaiting(BudgetAccount account, long bytes) {
    if (account.ticket != 0) {
      account.heldWaiting += bytes;
      heldByWaiters += bytes;
    }
  }

  /** {@code account}'s admitted frame ended (completed, or the small read it was let do is done). */
  void admissionEnded(BudgetAccount account) {
    if (pastLimit.get() == account && pastLimit.compareAndSet(account, null)) {
      admitWaiters();
    }
  }

  /** {@code account} takes the bytes it was granted: the rest of its frame; on its event loop. */
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

  /**
   * Admits waiters by turns, the newest and the oldest, while the one whose turn it is may be admitted; each is told
   * after the lock is let go (told on a test's inline executor, it may come straight back).
   */
  private void admitWaiters() {
    List<BudgetAccount> admitted = admittable();
    for (int i = 0; i < admitted.size(); i++) {
      admitted.get(i).admitted();
    }
  }

  private synchronized List<BudgetAccount> admittable() {
    List<BudgetAccount> admitted = List.of();
    while (!queue.isEmpty()) {
      BudgetAccount next = (oldestsTurn ? queue.firstEntry() : queue.lastEntry()).getValue();
      long now = used.get();
      // A small read (need 0) never takes the place past the limit: it may wait on a client that sends nothing.
      boolean onlyWaitersHold = now <= heldByWaiters;
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
      if (admitted.isEmpty()) {
        admitted = new ArrayList<>(2);
      }
      admitted.add(next);
    }
    return admitted;
  }

  // ---- eviction: rule 4, one check a grace while anyone waits ----

  private void check() {
    List<BudgetAccount> stalled = new ArrayList<>();
    List<BudgetAccount> stillResponses = new ArrayList<>();
    long now = ticker.nanoTime();
    synchronized (this) {
      if (queue.isEmpty()) {
        watching = false;
        return;
      }
      ticker.schedule(graceMs, this::check);
      for (BudgetAccount account : accounts) {
        if (account.frameStalled()) {
          stalled.add(account);
        }
        if (account.responsesStill(now, graceNanos)) {
          stillResponses.add(account);
        }
      }
    }
    int waiters = waiting;
    for (BudgetAccount account : stalled) {
      account.evictIfStalled(graceMs, waiters, used.get(), limit);
    }
    for (BudgetAccount account : stillResponses) {
      account.evictIfNotReading(graceMs, waiters, used.get(), limit);
    }
  }
}
