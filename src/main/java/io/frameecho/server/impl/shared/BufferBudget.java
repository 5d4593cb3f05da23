package io.frameecho.server.impl.shared;

import io.frameecho.protocol.Frames;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The process-wide budget of bytes <em>held</em>: bytes read and not yet answered (a frame being assembled,
 * whole frames not yet handed over), requests handed to the application, and responses waiting to be
 * written. It is shared by every connection on every event loop, so it is made of atomics; each
 * connection deals with it through its {@link BudgetAccount}, on its own event loop.
 * <p>
 * Bytes are counted as they are read, never on a header's word: a header alone holds nothing. Past the
 * limit, a connection that wants to read more stops (the read gate's {@code OVER_BUFFER_BUDGET}) and
 * waits. Three things keep the waiting short and free of deadlock:
 * <ul>
 *   <li><b>Release</b>: when bytes are released (a response written, a connection closed) and the budget
 *   has room again, waiting connections read again, in the order they began to wait: one per
 *   {@value #WAKE_QUANTUM} bytes of room (and at least one), so that a crowd of waiters does not carry the budget a
 *   read each past its limit; the check wakes the next ones while room is left.</li>
 *   <li><b>The completion reserve</b>: one waiting connection at a time may read past the limit until its
 *   frame is complete, by up to one frame ({@code maxFrameSize} and its header). Frames the budget holds
 *   can therefore always complete, even when incomplete frames alone fill it. While responses are held (they will
 *   be released), it is granted only to a frame that fits within the limit plus one frame; and once two frames whose
 *   holders yielded it are still held (until they complete or are evicted), only to one that fits within two. It
 *   goes in turn to the newest frame and to the oldest, the first in line that these rules allow: the newest, since
 *   what older frames read when they are let read again may be only what their kernel buffered before their senders
 *   went quiet; the oldest, since a client's next frame is always the newest. A holder that reads less than
 *   {@value #RESERVE_MIN_PROGRESS} bytes in two checks (a staller, a trickler) hands the reserve on, and
 *   its frame goes behind every other for it.</li>
 *   <li><b>Eviction</b>: while anyone waits, a check every tenth of {@code budgetGraceMs} (at most 100 ms) looks for
 *   connections whose incomplete frame has made no progress for {@code budgetGraceMs} while they were
 *   free to read (a connection the server paused is not stalled). The largest are evicted, on their own
 *   event loops, until the budget is back under its limit; a stalled holder of the reserve always is. And while the
 *   budget is over, each connection whose held bytes have not moved for as long is asked (once a grace) whether its
 *   client reads its responses: the connection cuts itself if not.</li>
 * </ul>
 * Memory held is therefore at most the limit, plus two frames (the reserve, and a frame an earlier holder left
 * incomplete: a second stops the reserve from going to a frame that does not fit), plus what reads already in
 * flight carried past the limit before their connections paused (one small read each: reads are small while the
 * budget is over its limit, and the reserve's holder reads no further than its frame's end).
 */
public final class BufferBudget {

  /** Bytes a reserve holder must read in two checks (320 KiB/s at the default grace) to keep the reserve. */
  static final long RESERVE_MIN_PROGRESS = 64 * 1024;

  /** The room one woken waiter is counted to take: about one socket read (Netty reads at most 64 KiB at a time by default). */
  static final long WAKE_QUANTUM = 64 * 1024;

  private final long limit;
  /** The completion reserve: one whole frame, header included. */
  private final long reserve;
  private final long graceNanos;
  /** How often a reserve holder's progress is weighed while others wait. */
  private final long yieldNanos;
  private final long checkMs;
  private final AtomicLong used = new AtomicLong();
  /** The part of {@link #used} in frames not handed over yet (incomplete, or held by a paused parser). */
  private final AtomicLong buffered = new AtomicLong();
  /** The most ever held at once; updated without a lock, so it may trail a concurrent peak by one read. */
  private volatile long peak;
  /** Every open connection's account, for the eviction check. */
  private final Set<BudgetAccount> accounts = ConcurrentHashMap.newKeySet();
  /**
   * Accounts paused for budget, in the order they began to wait: the first are woken first, so that a waiter woken
   * and paused again goes behind the others, and no waiter is passed over for ever by ones that happen to come first.
   */
  private final ConcurrentSkipListMap<Long, BudgetAccount> waiting = new ConcurrentSkipListMap<>();
  private final AtomicLong waitTickets = new AtomicLong();
  private final AtomicInteger waitingCount = new AtomicInteger();
  /** The account holding the completion reserve, or null. */
  private final AtomicReference<BudgetAccount> completing = new AtomicReference<>();
  private final AtomicBoolean watching = new AtomicBoolean();
  /** Frames that began to span reads so far: their order, newest last. */
  private final AtomicLong frameNumbers = new AtomicLong();
  /** Frames whose holder yielded the reserve and that are still held (not completed, evicted or closed). */
  private final AtomicInteger wastedFrames = new AtomicInteger();
  /** Grants of the reserve so far: a new grant to the same account is a new tenure, weighed afresh. */
  private final AtomicLong grants = new AtomicLong();
  /** The reserve's tenure as the check last saw it, and the holder's progress then (under the check's lock). */
  private long tenureWeighed = -1;
  private long holderProgress;
  private long holderWeighedNanos;

  private final Ticker ticker;

  /** A budget whose eviction check reads the time and sets its timer through {@code ticker}. */
  public BufferBudget(long limit, int maxFrameSize, long graceMs, Ticker ticker) {
    this.limit = limit;
    this.ticker = ticker;
    this.reserve = (long) maxFrameSize + Frames.HEADER_SIZE;
    this.graceNanos = TimeUnit.MILLISECONDS.toNanos(graceMs);
    this.checkMs = Math.max(10, Math.min(100, graceMs / 10));
    this.yieldNanos = TimeUnit.MILLISECONDS.toNanos(2 * checkMs);
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

  /** Connections paused until the budget has room. */
  public int waiting() {
    return waitingCount.get();
  }

  // ---- counting: one atomic add per read, one per response written ----

  /** Bytes just read: held from now on. */
  void received(long bytes) {
    notePeak(used.addAndGet(bytes));
  }

  /** Counts bytes that are held whatever the budget says (an application's response). */
  public void reserve(long bytes) {
    notePeak(used.addAndGet(bytes));
  }

  /** The bytes held in frames not handed over changed by {@code delta} (once per read, not per frame). */
  void bufferedChanged(long delta) {
    buffered.addAndGet(delta);
  }

  private void notePeak(long now) {
    if (now > peak) {
      peak = now;
    }
  }

  public void release(long bytes) {
    if (bytes == 0) {
      return;
    }
    long now = used.addAndGet(-bytes);
    if (waitingCount.get() > 0) {
      released(now);
    }
  }

  /** More is held than the limit. Read from any thread. */
  public boolean over() {
    return used.get() > limit;
  }

  /**
   * The reserve's holder stops at the limit plus one frame, but only while some of what is held is
   * responses (which will be written and released); incomplete frames alone never stop it.
   */
  boolean overForCompletion() {
    long now = used.get();
    return now > limit + reserve && now - buffered.get() > 0;
  }

  // ---- waiting ----

  void register(BudgetAccount account) {
    accounts.add(account);
  }

  void unregister(BudgetAccount account) {
    accounts.remove(account);
  }

  /** {@code account} has paused for budget: it is woken by a release, the reserve, or an eviction. */
  void await(BudgetAccount account) {
    if (account.waitTicket == 0) {
      long ticket = waitTickets.incrementAndGet();
      account.waitTicket = ticket;
      waiting.put(ticket, account);
      waitingCount.incrementAndGet();
    }
    watch();
    // A release may have happened just before the account was listed.
    released(used.get());
  }

  /** {@code account} reads again, or closed. */
  void leave(BudgetAccount account) {
    long ticket = account.waitTicket;
    if (ticket != 0) {
      account.waitTicket = 0;
      waiting.remove(ticket);
      waitingCount.decrementAndGet();
    }
  }

  private void released(long now) {
    if (now <= limit) {
      // As many as the room can feed a read each: woken all at once, a thousand waiters would each carry
      // the budget a read past its limit. The others are woken by later releases, or by the check.
      long wakes = (limit - now) / WAKE_QUANTUM + 1;
      for (BudgetAccount account : waiting.values()) {
        if (wakes-- == 0) {
          break;
        }
        account.wakeSoon();
      }
    } else {
      // The reserve's holder may be waiting at the limit plus one frame.
      BudgetAccount holder = completing.get();
      if (holder != null && holder.waitTicket != 0) {
        holder.wakeSoon();
      }
    }
    offerReserve();
  }

  /**
   * Gives the completion reserve, if free, to the next waiting connection in line that {@link #mayHaveTheReserve may
   * have it}: frames that have not wasted it first, then by turns the newest frame and the oldest.
   */
  private void offerReserve() {
    if (completing.get() != null) {
      return;
    }
    // Two lines, served in turn: the newest frame, and the oldest. The newest is the likeliest to complete (old frames
    // may be held by senders gone quiet, whose kernel buffers make them look busy when let read); the oldest, so that
    // frames arriving all the time (a client's next frame is always the newest) do not pass an old one for ever. The
    // oldest's turn is skipped while a frame that wasted the reserve is held: each quiet sender it goes to leaves one
    // (found by a trial: with 5,000 quiet holders, their wasted frames kept a fresh frame from fitting for 10 s).
    boolean oldestsTurn = (grants.get() & 1) == 1 && wastedFrames.get() == 0;
    long now = used.get();
    boolean responsesHeld = now - buffered.get() > 0;
    boolean twoWasted = wastedFrames.get() >= 2;
    BudgetAccount next = null;
    boolean nextWasted = true;
    long nextNumber = Long.MIN_VALUE;
    for (BudgetAccount account : waiting.values()) {
      if (account.bufferedBytes() > 0 && !account.pausedForOther()
        && mayHaveTheReserve(now, account.remainingBytes(), responsesHeld, twoWasted)) {
        boolean wasted = account.reserveWasted();
        long number = account.frameNumber();
        boolean better = oldestsTurn && !wasted ? number < nextNumber : number > nextNumber;
        if (next == null || (nextWasted && !wasted) || (wasted == nextWasted && better)) {
          next = account;
          nextWasted = wasted;
          nextNumber = number;
        }
      }
    }
    if (next == null) {
      return;
    }
    if (completing.compareAndSet(null, next)) {
      grants.incrementAndGet();
      next.reserveGranted();
    }
  }

  /**
   * Whether a frame with {@code remaining} bytes to go may have the reserve now. One that fits within the limit plus one
   * frame may. One that does not may only while no responses are held (they will be released: it can wait for them),
   * or incomplete frames alone could keep every frame waiting; but a tenure that ends before its frame does leaves that
   * frame held until it completes, is evicted or closes, so with two such frames held it must fit within two frames
   * past the limit: a chain of stallers taking the reserve in turn cannot pile up a frame each. The first in line that
   * may have it gets it: a frame that may not does not keep a small one waiting behind it (found by a trial: 4,000
   * reconnecting stallers kept a fresh 4 KiB frame, 4 bytes short after its first read, waiting 14 s).
   */
  private boolean mayHaveTheReserve(long now, long remaining, boolean responsesHeld, boolean twoWasted) {
    return now + remaining <= limit + reserve || !responsesHeld && (!twoWasted || now + remaining <= limit + 2 * reserve);
  }

  /** A holder yielded the reserve with its frame incomplete: that frame stays held past the limit. */
  void wastedFrameHeld() {
    wastedFrames.incrementAndGet();
  }

  /** A frame that wasted the reserve completed, or its connection closed. */
  void wastedFrameEnded() {
    wastedFrames.decrementAndGet();
  }

  /** The next number in the order in which frames began to span reads. */
  long nextFrameNumber() {
    return frameNumbers.incrementAndGet();
  }

  /** {@code account}'s frame completed, or it no longer wants the reserve: the next may have it. */
  void returnReserve(BudgetAccount account) {
    if (completing.compareAndSet(account, null)) {
      offerReserve();
    }
  }

  // ---- eviction ----

  private void watch() {
    if (watching.compareAndSet(false, true)) {
      ticker.schedule(checkMs, this::check);
    }
  }

  /**
   * A reserve that barely moves (a staller that took it, a client trickling a byte at a time) would keep
   * every waiting frame, a fresh client's too, waiting for as long as the holder likes: free to read, it
   * must read {@link #RESERVE_MIN_PROGRESS} bytes every two checks to keep it. The window starts afresh with
   * each tenure of the reserve and whenever the holder is seen paused (waiting at the limit plus one frame, or
   * its responses unread): time it could not read is not held against it.
   */
  private void weighHolder(BudgetAccount holder, long tenure, long now) {
    if (holder == null) {
      tenureWeighed = -1;
      return;
    }
    long progress = holder.progress();
    if (tenure != tenureWeighed || !holder.readable()) {
      tenureWeighed = tenure;
      holderProgress = progress;
      holderWeighedNanos = now;
    } else if (now - holderWeighedNanos >= yieldNanos) {
      if (progress - holderProgress < RESERVE_MIN_PROGRESS) {
        holder.yieldReserve();
      }
      holderProgress = progress;
      holderWeighedNanos = now;
    }
  }

  /** While anyone waits: evicts stalled holders, largest first, until the budget is under its limit. */
  private synchronized void check() {
    if (waitingCount.get() == 0) {
      tenureWeighed = -1;
      watching.set(false);
      if (waitingCount.get() > 0) {
        watch();
      }
      return;
    }
    ticker.schedule(checkMs, this::check);
    // Waiters woken earlier may have read nothing (their senders went quiet): the room goes to the next ones.
    released(used.get());
    long now = ticker.nanoTime();
    long tenure = grants.get();
    BudgetAccount holder = completing.get();
    weighHolder(holder, tenure, now);
    // Sizes are read once: other event loops change them while the check runs, and a sort needs them to stand still.
    List<Stalled> stalled = new ArrayList<>();
    List<Stalled> unread = new ArrayList<>();
    for (BudgetAccount account : accounts) {
      if (account.observe(now) && now - account.progressSeenNanos >= graceNanos) {
        stalled.add(new Stalled(account, account.bufferedBytes()));
      }
      if (account.responsesStill(now) && now - account.heldSeenNanos >= graceNanos) {
        unread.add(new Stalled(account, account.responseBytes()));
      }
    }
    long over = used.get() - limit;
    int waiters = waitingCount.get();
    stalled.sort(Comparator.comparingLong(Stalled::bytes).reversed());
    for (Stalled candidate : stalled) {
      BudgetAccount account = candidate.account;
      if (over > 0 || account == holder) {
        over -= candidate.bytes;
        account.evictIfStalled(account.progressSeen, TimeUnit.NANOSECONDS.toMillis(now - account.progressSeenNanos),
          waiters, used.get(), limit);
      }
    }
    // Responses whose clients read none of them are never released: they would keep the budget spent (and every waiting
    // frame waiting) until writeStallTimeoutMs. While the budget is over, each connection whose held bytes have not moved
    // is asked, at most once a grace: whether its client reads is its own to tell, so a reader beside a non-reader does
    // not shield it (found by a trial, when the asking stopped once the bytes asked about covered the excess).
    if (over > 0) {
      long graceMs = TimeUnit.NANOSECONDS.toMillis(graceNanos);
      for (Stalled candidate : unread) {
        BudgetAccount account = candidate.account;
        if (now - account.askedNanos >= graceNanos) {
          account.askedNanos = now;
          account.evictIfNotReading(candidate.bytes, graceMs, waiters, used.get(), limit);
        }
      }
    }
  }

  /** A stalled account and the bytes it held when the check looked. */
  private record Stalled(BudgetAccount account, long bytes) {
  }
}
