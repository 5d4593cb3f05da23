package io.frameecho.server.impl.shared;

import java.util.concurrent.Executor;

/**
 * One connection's account with the deployment's {@link BufferBudget}, updated from the parser's own figures after
 * each read ({@link #settle}) rather than a copy. On the connection's event loop.
 */
public final class BudgetAccount {

  /** Read size allowed while others wait or the budget is over; a frame smaller than this asks for nothing. */
  public static final int SMALL_READ = 4096;
  /** Bytes an admitted frame must read per grace period while others wait, or be evicted. */
  public static final long MIN_PROGRESS = 64 * 1024;

  /** What the budget tells its connection, on the connection's event loop. */
  public interface Owner {

    /** Admitted: read again. */
    void budgetHasRoom();

    /** The admitted frame, holding {@code heldBytes}, made too little progress while others waited. */
    void budgetEvicted(long heldBytes, long stalledMs, int waiting, long used, long limit);

    /** The server paused this connection while the budget is over: evict it if its client is not reading. */
    void evictIfNotReading(long graceMs, int waiting, long used, long limit);
  }

  /** What the account may read beyond what it holds. */
  private enum Admission { NONE, FRAME, READ }

  private final BufferBudget budget;
  private final Executor loop;
  private final Owner owner;

  private long buffered;
  /** Bytes admitted and not read yet; reads consume these first. */
  private long promised;
  private Admission waitingFor = Admission.NONE;
  private boolean closing;
  /** Registered with the budget's stall check. */
  private boolean watched;
  /** Bytes read by the admitted frame since the last progress mark. */
  private long sinceMark;

  // Read by the budget's check from another thread.
  private volatile Admission admission = Admission.NONE;
  private volatile long frameBytes;
  private volatile long markNanos;
  private volatile boolean pausedByServer;

  /** Queue position; a frame's ask keeps the position of the small-read ask before it. */
  long place;
  // Guarded by the budget's lock.
  boolean queued;
  long need;
  long heldWaiting;
  private long askedNanos = Long.MIN_VALUE / 2;

  /** {@code loop} runs tasks on the connection's event loop. */
  public BudgetAccount(BufferBudget budget, Executor loop, Owner owner) {
    this.budget = budget;
    this.loop = loop;
    this.owner = owner;
  }

  /** Counts {@code bytes} just read as held, taking admitted bytes first. */
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
   * Updates the account after a read with the parser's buffered bytes, the current frame's full size (0 if unknown),
   * and whether a frame completed. Returns true when reading must stop until admitted.
   */
  public boolean settle(long bufferedNow, long frameSizeNow, boolean frameCompleted) {
    if (closing || waitingFor != Admission.NONE) {
      return false;
    }
    if (admission == Admission.FRAME && frameCompleted) {
      endAdmission();
    }
    buffered = bufferedNow;
    if (admission != Admission.NONE) {
      return false;
    }
    long rest = frameSizeNow - bufferedNow;
    if (rest > 0 && bufferedNow >= SMALL_READ) {
      return ask(Admission.FRAME, rest);
    }
    return (budget.waiting() > 0 || budget.over()) && ask(Admission.READ, 0);
  }

  /** Returns true when the connection must wait. */
  private boolean ask(Admission what, long rest) {
    waitingFor = what;
    if (!budget.admit(this, rest, buffered)) {
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
    }
    admission = what;
  }

  private void watch() {
    if (!watched) {
      watched = true;
      budget.watch(this);
    }
  }

  /** Restarts the admitted frame's grace period. */
  private void mark() {
    sinceMark = 0;
    markNanos = budget.ticker.nanoTime();
  }

  private void endAdmission() {
    admission = Admission.NONE;
    budget.release(promised);
    promised = 0;
  }

  /** Reading is paused or resumed for a reason other than the budget, which is not a stall. */
  public void serverPaused(boolean paused) {
    if (paused != pausedByServer) {
      watch();
      pausedByServer = paused;
      mark();
    }
  }

  /** The most the next read may take; never below a small read, because TLS reads whole records. */
  public int readCap(int smallRead) {
    return switch (admission) {
      case FRAME -> (int) Math.min(Integer.MAX_VALUE, Math.max(promised, smallRead));
      case READ -> smallRead;
      case NONE -> budget.waiting() > 0 || budget.over() ? smallRead : Integer.MAX_VALUE;
    };
  }

  /** Whether the frame under way is admitted whole, so its memory may be set aside ahead of its bytes. */
  public boolean frameAdmitted() {
    return admission == Admission.FRAME;
  }

  /** Swaps a request's {@code released} bytes for its response's {@code held} bytes. */
  public void exchange(int released, int held) {
    budget.change((long) held - released);
  }

  /** Releases {@code bytes} from the budget. */
  public void release(int bytes) {
    budget.release(bytes);
  }

  /** The connection is closing: releases everything, including {@code bufferedNow} parser bytes. */
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
    budget.release(bufferedNow);
  }

  /** Releases everything and leaves the budget. */
  public void close(long bufferedNow) {
    closing(bufferedNow);
    if (watched) {
      budget.unwatch(this);
    }
  }

  // Called by the budget, from any thread.

  /** Admitted from the queue for {@code grant}; applied on the connection's loop, or returned if it is closing. */
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
   * Under the budget's lock while over: evicts a stalled admitted frame, returning the bytes freed, and at most once
   * per grace asks a server-paused connection to check its client.
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
