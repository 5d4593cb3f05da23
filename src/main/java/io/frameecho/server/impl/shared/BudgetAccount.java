package io.frameecho.server.impl.shared;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.Executor;

/**
 * One connection's dealings with the deployment's {@link BufferBudget}: the one seam through which it holds, asks
 * and releases bytes. After each read the connection {@link #settle}s the account with what its parser reports (bytes
 * buffered, the size the frame under way announced); the account keeps no count of its own of what the parser holds.
 * <p>
 * Everything but the methods marked otherwise runs on the connection's event loop. What the budget's check reads
 * from another thread is published: what changes per read with plain (opaque) stores, so the read path pays no
 * fence; the admission and the server's pauses in volatile fields, written only when they change. What the check
 * decides comes back through {@code loop}, the connection's own event loop.
 */
public final class BudgetAccount {

  private static final VarHandle PROGRESS;
  private static final VarHandle HELD;
  private static final VarHandle BUFFERED;
  private static final VarHandle SET_ASIDE;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      PROGRESS = lookup.findVarHandle(BudgetAccount.class, "progress", long.class);
      HELD = lookup.findVarHandle(BudgetAccount.class, "heldBesidesReads", long.class);
      BUFFERED = lookup.findVarHandle(BudgetAccount.class, "buffered", long.class);
      SET_ASIDE = lookup.findVarHandle(BudgetAccount.class, "setAside", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /**
   * A small read: what reads take while the budget is over its limit, and what a frame may hold before it asks to be
   * admitted (a header and a little of its body hold what was sent, not what the header announces).
   */
  public static final int SMALL_READ = 4096;

  /** Bytes an admitted frame must read in a grace, while others wait, to keep its admission (64 KiB/s at 1 s). */
  public static final long MIN_PROGRESS = 64 * 1024;

  /** What the budget tells its connection, on the connection's event loop. */
  public interface Owner {

    /** The budget admitted this connection's frame (or one small read): read again. */
    void budgetHasRoom();

    /** The budget evicts this connection: its admitted frame of {@code heldBytes} so far read too little. */
    void budgetEvicted(long heldBytes, long stalledMs, int waiting, long used, long limit);

    /**
     * Its held responses have not moved for {@code graceMs} while the budget is over and others wait: the connection
     * cuts itself if its client does not read them.
     */
    void evictIfNotReading(long graceMs, int waiting, long used, long limit);
  }

  /** What the account was admitted for: nothing, the rest of the frame under way, or one small read. */
  private enum Admission { NONE, FRAME, READ }

  private final BufferBudget budget;
  private final Executor loop;
  private final Owner owner;

  /** The parser's bytes buffered and the frame under way's whole size (0 when none), as last settled. */
  private long buffered;
  private long frameSize;
  /** Memory the parser set aside and has not filled, counted as held (an admitted frame's admission covers it). */
  private long setAside;
  private Admission admission = Admission.NONE;
  /** Bytes of the admitted frame (or read) not read yet: counted already, so reads take from it first. */
  private long promised;
  /** What the account waits for, or NONE while it does not. */
  private Admission waitingFor = Admission.NONE;
  private boolean closing;
  private boolean watched;

  // Written under the budget's lock: its place in the queue, what it asked, holds, and was granted.
  long ticket;
  long need;
  long heldWaiting;
  long granted;

  // Published for the budget's check.
  /** Bytes ever read. */
  private long progress;
  /** With {@link #progress}, what the account holds: plus responses held and memory set aside, less releases. */
  private long heldBesidesReads;
  /** Frames admitted so far: the number of the admission in force while {@link #frameAdmitted}. */
  private volatile long admissions;
  private volatile boolean frameAdmitted;
  /** Reading is paused for a reason other than the budget; and how many such pauses began so far. */
  private volatile boolean pausedByServer;
  private volatile int serverPauses;

  // The check's own view (under the budget's lock).
  private long seenAdmission = -1;
  private long seenProgress;
  private int seenPauses;
  private long heldSeen = -1;
  private long heldSeenNanos;
  private long askedNanos = Long.MIN_VALUE / 2;

  /** {@code loop} runs a task on the connection's event loop (its context's {@code runOnContext}). */
  public BudgetAccount(BufferBudget budget, Executor loop, Owner owner) {
    this.budget = budget;
    this.loop = loop;
    this.owner = owner;
  }

  // ---- the read path ----

  /** {@code bytes} were just read, before they are parsed: held from now on (an admission counted them already). */
  public void received(int bytes) {
    progress += bytes;
    PROGRESS.setOpaque(this, progress);
    long counted = Math.min(bytes, promised);
    promised -= counted;
    if (bytes > counted) {
      budget.reserve(bytes - counted);
    }
    if (waitingFor != Admission.NONE) {
      budget.heldWhileWaiting(this, bytes);
    }
    if (admission == Admission.READ) {
      endAdmission();
    }
  }

  /**
   * The one after-read step (rules 2 and 3): what the parser now buffers, the size of the frame under way (0 when no
   * header is decided), whether a frame completed since the last settle, and the memory the parser set aside. A frame
   * under way that holds more than a small read asks to be admitted for its rest. Returns true when reading must stop
   * until the budget admits the connection; it waits by then.
   */
  public boolean settle(long bufferedNow, long frameSizeNow, boolean frameCompleted, long setAsideNow) {
    if (closing || waitingFor != Admission.NONE) {
      return false;
    }
    if (admission == Admission.FRAME && frameCompleted) {
      endAdmission();
    }
    holdSetAside(admission == Admission.FRAME ? 0 : setAsideNow);
    if (bufferedNow != buffered) {
      BUFFERED.setOpaque(this, bufferedNow);
    }
    frameSize = frameSizeNow;
    if (admission != Admission.NONE) {
      return false;
    }
    long rest = frameSizeNow - bufferedNow;
    if (rest > 0 && bufferedNow > SMALL_READ) {
      if (budget.admitNow(rest)) {
        admit(Admission.FRAME, rest);
        return false;
      }
      return await(Admission.FRAME, rest);
    }
    if (budget.waiting() > 0 || budget.over()) {
      return await(Admission.READ, 0);
    }
    return false;
  }

  private boolean await(Admission what, long rest) {
    waitingFor = what;
    long grant = budget.await(this, rest, buffered + setAside);
    if (grant < 0) {
      return true;
    }
    waitingFor = Admission.NONE;
    admit(what, grant);
    return false;
  }

  private void admit(Admission what, long rest) {
    admission = what;
    promised += rest;
    if (what == Admission.FRAME) {
      watched();
      admissions++;
      frameAdmitted = true;
      holdSetAside(0);
    }
  }

  /** The admitted frame completed (or the small read is done, or the connection closes): what it did not read goes back. */
  private void endAdmission() {
    admission = Admission.NONE;
    frameAdmitted = false;
    long unread = promised;
    promised = 0;
    budget.release(unread);
    budget.admissionEnded(this);
  }

  private void holdSetAside(long setAsideNow) {
    long delta = setAsideNow - setAside;
    if (delta != 0) {
      SET_ASIDE.setOpaque(this, setAsideNow);
      held(delta);
      if (delta > 0) {
        budget.reserve(delta);
      } else {
        budget.release(-delta);
      }
    }
  }

  private void held(long delta) {
    HELD.setOpaque(this, heldBesidesReads + delta);
  }

  /** The server paused reading for {@code forBudget} or another reason: time paused by the server is not a stall. */
  public void readingPaused(boolean forBudget) {
    if (!forBudget && !pausedByServer) {
      // Responses may pile up behind a paused connection: the check looks at it from now on.
      watched();
      pausedByServer = true;
      serverPauses++;
    }
  }

  private void watched() {
    if (!watched) {
      watched = true;
      budget.watch(this);
    }
  }

  /** Every reason to pause has cleared: the connection reads again. */
  public void readingResumed() {
    otherPausesCleared();
  }

  /** No reason but the budget keeps reading paused any more. */
  public void otherPausesCleared() {
    if (pausedByServer) {
      pausedByServer = false;
    }
  }

  /**
   * The most this connection's next read may take (rule 5): an admitted frame reads to its end, or a small read at
   * least, since over TLS the socket's bytes are records that tiny reads would take apart; a connection let do one read
   * does a small one; others do small ones while the budget is over its limit.
   */
  public int readCap(int smallRead) {
    switch (admission) {
      case FRAME:
        return (int) Math.min(Integer.MAX_VALUE, Math.max(promised, smallRead));
      case READ:
        return smallRead;
      default:
        return budget.over() ? smallRead : Integer.MAX_VALUE;
    }
  }

  /** The budget is more than half spent: frames should set little memory aside. Read from any thread. */
  public boolean memoryScarce() {
    return budget.used() > budget.limit() / 2;
  }

  public long budgetUsed() {
    return budget.used();
  }

  public long budgetLimit() {
    return budget.limit();
  }

  /** True while the connection waits for the budget to admit it. */
  public boolean waitingForBudget() {
    return waitingFor != Admission.NONE;
  }

  // ---- admitted (called by the budget from any thread; the work hops to the connection's event loop) ----

  void admitted() {
    loop.execute(() -> {
      long grant = budget.takeGrant(this);
      Admission what = waitingFor;
      if (closing || what == Admission.NONE) {
        return;
      }
      waitingFor = Admission.NONE;
      admit(what, grant);
      owner.budgetHasRoom();
    });
  }

  // ---- responses ----

  /** Counts bytes held whatever the budget says (a response already produced). */
  public void hold(int bytes) {
    held(bytes);
    budget.reserve(bytes);
  }

  public void release(int bytes) {
    held(-bytes);
    budget.release(bytes);
  }

  // ---- the end ----

  /**
   * The connection is closing with {@code bufferedNow} bytes in its parser: nothing more will be parsed, so they are
   * released now (a lingering close may take a while); its wait, or its admission, ends.
   */
  public void closing(long bufferedNow) {
    if (closing) {
      return;
    }
    closing = true;
    if (waitingFor != Admission.NONE) {
      // Granted or not yet, the wait ends here: a grant still on its way to this loop comes back.
      waitingFor = Admission.NONE;
      budget.leave(this);
    }
    if (admission != Admission.NONE) {
      endAdmission();
    }
    holdSetAside(0);
    held(-bufferedNow);
    budget.release(bufferedNow);
    BUFFERED.setOpaque(this, 0L);
  }

  /** The connection closed with {@code bufferedNow} bytes in its parser: they are released, and it leaves the budget. */
  public void close(long bufferedNow) {
    closing(bufferedNow);
    if (watched) {
      budget.unwatch(this);
    }
  }

  // ---- the budget's check (rule 4), under its lock ----

  /**
   * Whether the admitted frame read less than {@link #MIN_PROGRESS} since the check's last look, one grace
   * ago, while the server let it read all along. A new admission, or a pause by the server, starts the window anew.
   */
  boolean frameStalled() {
    if (!frameAdmitted) {
      seenAdmission = -1;
      return false;
    }
    long now = (long) PROGRESS.getOpaque(this);
    long number = admissions;
    int pauses = serverPauses;
    boolean stalled = number == seenAdmission && pauses == seenPauses && !pausedByServer
      && now - seenProgress < MIN_PROGRESS;
    seenAdmission = number;
    seenProgress = now;
    seenPauses = pauses;
    return stalled;
  }

  /**
   * Whether this account holds responses that have not moved for {@code graceNanos}; asked once a grace at most.
   */
  boolean responsesStill(long nowNanos, long graceNanos) {
    long held = (long) PROGRESS.getOpaque(this) + (long) HELD.getOpaque(this);
    if (held != heldSeen) {
      heldSeen = held;
      heldSeenNanos = nowNanos;
      return false;
    }
    long responses = held - (long) BUFFERED.getOpaque(this) - (long) SET_ASIDE.getOpaque(this);
    if (responses <= 0 || nowNanos - heldSeenNanos < graceNanos || nowNanos - askedNanos < graceNanos) {
      return false;
    }
    askedNanos = nowNanos;
    return true;
  }

  /** The check found the admitted frame stalled: evicted if that admission is still in force, on its own loop. */
  void evictIfStalled(long graceMs, int waiting, long used, long limit) {
    long number = admissions;
    loop.execute(() -> {
      if (!closing && admission == Admission.FRAME && admissions == number) {
        owner.budgetEvicted(buffered, graceMs, waiting, used, limit);
      }
    });
  }

  /** The check found this connection's responses unmoved: its connection looks at its client. */
  void evictIfNotReading(long graceMs, int waiting, long used, long limit) {
    loop.execute(() -> {
      if (!closing) {
        owner.evictIfNotReading(graceMs, waiting, used, limit);
      }
    });
  }
}
