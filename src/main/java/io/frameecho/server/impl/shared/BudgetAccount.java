package io.frameecho.server.impl.shared;

import java.util.concurrent.Executor;

/**
 * One connection's seam to the deployment's {@link BufferBudget}: it counts what the connection reads, holds and
 * releases, and after each read {@link #settle}s with what the parser reports, keeping no count of its own of what the
 * parser holds. It runs on the connection's event loop; what the budget decides comes back through {@code loop}.
 */
public final class BudgetAccount {

  /** A small read: reads take no more while anyone waits or the budget is over; a frame holding less asks nothing. */
  public static final int SMALL_READ = 4096;
  /** What an admitted frame must read in a grace while others wait, or be evicted: 64 KiB/s at the default 1 s. */
  public static final long MIN_PROGRESS = 64 * 1024;

  /** What the budget tells its connection, on the connection's event loop. */
  public interface Owner {

    /** Admitted (its frame's rest, or one small read): read again. */
    void budgetHasRoom();

    /** The admitted frame, {@code heldBytes} so far, read too little while {@code waiting} others waited. */
    void budgetEvicted(long heldBytes, long stalledMs, int waiting, long used, long limit);

    /** The server paused reading, its responses unread maybe, while the budget is over: cut it if so. */
    void evictIfNotReading(long graceMs, int waiting, long used, long limit);
  }

  /** What the account may read beyond what it holds: nothing asked, the rest of its frame, or one small read. */
  private enum Admission { NONE, FRAME, READ }

  private final BufferBudget budget;
  private final Executor loop;
  private final Owner owner;

  private long buffered;
  /** Memory the parser set aside and has not filled: held, unless an admission covers it. */
  private long setAside;
  /** Bytes admitted and not read yet: counted already, so reads take from them first. */
  private long promised;
  private Admission waitingFor = Admission.NONE;
  private boolean closing;
  /** Its budget's check looks at it (since its first admitted frame or pause). */
  private boolean watched;
  /** What the admitted frame read since it last read {@link #MIN_PROGRESS}. */
  private long sinceMark;

  // Read by the check: what is admitted, what the frame holds and was promised (what its eviction releases), when it
  // last made progress (or the server paused or resumed it), and whether the server paused it.
  private volatile Admission admission = Admission.NONE;
  private volatile long frameBytes;
  private volatile long markNanos;
  private volatile boolean pausedByServer;

  /** Its place in the queue: an ask for a frame's rest keeps the place of the ask for a small read before it. */
  long place;
  // Under the budget's lock: waiting in the queue, what it asked, what it holds while waiting, when last asked.
  boolean queued;
  long need;
  long heldWaiting;
  private long askedNanos = Long.MIN_VALUE / 2;

  /** {@code loop} runs a task on the connection's event loop (its context's {@code runOnContext}). */
  public BudgetAccount(BufferBudget budget, Executor loop, Owner owner) {
    this.budget = budget;
    this.loop = loop;
    this.owner = owner;
  }

  /** {@code bytes} were just read: held from now on (an admission counted them already). */
  public void received(int bytes) {
    long counted = Math.min(bytes, promised);
    promised -= counted;
    if (bytes > counted) {
      budget.reserve(bytes - counted);
    }
    if (admission == Admission.FRAME && (sinceMark += bytes) >= MIN_PROGRESS) {
      mark();
    } else if (admission == Admission.READ) {
      endAdmission();
    }
  }

  /**
   * The after-read step, with what the parser buffers, the whole size of the frame under way (0 when no header is
   * decided), whether a frame completed since the last settle, and the memory set aside. Returns true when reading must
   * stop until the budget admits the connection.
   */
  public boolean settle(long bufferedNow, long frameSizeNow, boolean frameCompleted, long setAsideNow) {
    if (closing || waitingFor != Admission.NONE) {
      return false;
    }
    if (admission == Admission.FRAME && frameCompleted) {
      endAdmission();
    }
    buffered = bufferedNow;
    holdSetAside(admission == Admission.FRAME ? 0 : setAsideNow);
    if (admission != Admission.NONE) {
      return false;
    }
    long rest = frameSizeNow - bufferedNow;
    if (rest > 0 && bufferedNow >= SMALL_READ) {
      return ask(Admission.FRAME, rest);
    }
    return (budget.waiting() > 0 || budget.over()) && ask(Admission.READ, 0);
  }

  /** Asks to be admitted for {@code rest}: true when it must wait. */
  private boolean ask(Admission what, long rest) {
    waitingFor = what;
    if (!budget.admit(this, rest, buffered + setAside)) {
      return true;
    }
    waitingFor = Admission.NONE;
    admit(what, rest);
    return false;
  }

  private void admit(Admission what, long rest) {
    promised += rest;
    if (what == Admission.FRAME) {
      place = 0;
      watch();
      mark();
      frameBytes = buffered + rest;
      holdSetAside(0);
    }
    admission = what;
  }

  private void watch() {
    if (!watched) {
      watched = true;
      budget.watch(this);
    }
  }

  /** The admitted frame made progress, or its grace starts anew. */
  private void mark() {
    sinceMark = 0;
    markNanos = budget.ticker.nanoTime();
  }

  private void endAdmission() {
    admission = Admission.NONE;
    budget.release(promised);
    promised = 0;
  }

  private void holdSetAside(long setAsideNow) {
    budget.change(setAsideNow - setAside);
    setAside = setAsideNow;
  }

  /** Reading is paused, or no longer, for a reason other than the budget: not a stall; maybe a client reading nothing. */
  public void serverPaused(boolean paused) {
    if (paused != pausedByServer) {
      watch();
      pausedByServer = paused;
      mark();
    }
  }

  /**
   * The most the next read may take: an admitted frame reads to its end, one let read once a small read, others small
   * reads while anyone waits or the budget is over (so that a waiter holds a small read or two). Never less than a
   * small read: over TLS the socket's bytes are records.
   */
  public int readCap(int smallRead) {
    return switch (admission) {
      case FRAME -> (int) Math.min(Integer.MAX_VALUE, Math.max(promised, smallRead));
      case READ -> smallRead;
      case NONE -> budget.waiting() > 0 || budget.over() ? smallRead : Integer.MAX_VALUE;
    };
  }

  /** The budget is more than half spent: frames should set little memory aside. Read from any thread. */
  public boolean memoryScarce() {
    return budget.used() > budget.limit() / 2;
  }

  /** An application's response of {@code held} bytes takes the place of its request's {@code released}, at once. */
  public void exchange(int released, int held) {
    budget.change((long) held - released);
  }

  public void release(int bytes) {
    budget.release(bytes);
  }

  /** The connection is closing with {@code bufferedNow} bytes in its parser: nothing more is parsed, so all go now. */
  public void closing(long bufferedNow) {
    if (closing) {
      return;
    }
    closing = true;
    if (waitingFor != Admission.NONE) {
      waitingFor = Admission.NONE;
      budget.leave(this);
    }
    if (admission != Admission.NONE) {
      endAdmission();
    }
    holdSetAside(0);
    budget.release(bufferedNow);
  }

  /** The connection closed: what it held goes, and it leaves the budget. */
  public void close(long bufferedNow) {
    closing(bufferedNow);
    if (watched) {
      budget.unwatch(this);
    }
  }

  // ---- called by the budget, from any thread ----

  /** Admitted from the queue for {@code grant}: taken on the connection's own loop, or handed back if it closed. */
  void admitted(long grant) {
    loop.execute(() -> {
      if (closing) {
        budget.release(grant);
        return;
      }
      Admission what = waitingFor;
      waitingFor = Admission.NONE;
      admit(what, grant);
      owner.budgetHasRoom();
    });
  }

  private boolean frameStalled(long nowNanos, long graceNanos) {
    return admission == Admission.FRAME && !pausedByServer && nowNanos - markNanos >= graceNanos;
  }

  /**
   * Under the budget's lock, while it is over and others wait: evicts the admitted frame if the server let it read and
   * it went a grace without progress, returning what that releases; asks, once a grace at most, a connection the server
   * paused whether its client reads. Both on the connection's own loop, if still so.
   */
  long look(long nowNanos, long graceNanos) {
    if (frameStalled(nowNanos, graceNanos)) {
      loop.execute(() -> {
        if (!closing && frameStalled(budget.ticker.nanoTime(), graceNanos)) {
          owner.budgetEvicted(buffered, graceNanos / 1_000_000, budget.waiting(), budget.used(), budget.limit());
        }
      });
      return frameBytes;
    }
    if (pausedByServer && nowNanos - askedNanos >= graceNanos) {
      askedNanos = nowNanos;
      loop.execute(() -> {
        if (!closing) {
          owner.evictIfNotReading(graceNanos / 1_000_000, budget.waiting(), budget.used(), budget.limit());
        }
      });
    }
    return 0;
  }
}
