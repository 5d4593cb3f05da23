package io.frameecho.server.impl.shared;

import java.util.concurrent.Executor;

/**
 * One connection's seam to the deployment's {@link BufferBudget}: it counts what the connection reads, holds and
 * releases, and after each read {@link #settle}s with what the parser reports (bytes buffered, the size of the frame
 * under way), keeping no count of its own of what the parser holds. It runs on the connection's event loop, but for
 * the methods the budget calls: what the budget decides comes back through {@code loop}.
 */
public final class BudgetAccount {

  /** A small read: reads take no more while the budget is over its limit; a frame holding no more asks nothing. */
  public static final int SMALL_READ = 4096;
  /** What an admitted frame must read in a grace while others wait, or be evicted: 64 KiB/s at the default 1 s. */
  public static final long MIN_PROGRESS = 64 * 1024;

  /** What the budget tells its connection, on the connection's event loop. */
  public interface Owner {

    /** The budget admitted the connection (its frame's rest, or one small read): read again. */
    void budgetHasRoom();

    /** Rule 4: the admitted frame, {@code heldBytes} so far, read too little while {@code waiting} others wait. */
    void budgetEvicted(long heldBytes, long stalledMs, int waiting, long used, long limit);

    /** Rule 4: reading is paused for its responses while the budget is over: cut it if its client reads none. */
    void evictIfNotReading(long graceMs, int waiting, long used, long limit);
  }

  /** What the account may read: what it read so far only, the rest of the frame under way, or one small read. */
  private enum Admission { NONE, FRAME, READ }

  private final BufferBudget budget;
  private final Executor loop;
  private final Owner owner;

  private long buffered;
  /** Memory the parser set aside and has not filled: held, unless an admission covers it. */
  private long setAside;
  private Admission admission = Admission.NONE;
  /** Bytes admitted and not read yet: counted already, so reads take from them first. */
  private long promised;
  private Admission waitingFor = Admission.NONE;
  private boolean closing;
  /** The budget's key for this account once its check looks at it, else 0. */
  private long watchKey;

  // Under the budget's lock: the place in its queue, what was asked, what is held while waiting, what was granted.
  long ticket;
  long need;
  long heldWaiting;
  long granted;

  // Published for the budget's check, written only while a frame is admitted or when the server pauses reading.
  private volatile long admittedFrame;
  private volatile long admittedProgress;
  private volatile int serverPauses;
  private volatile boolean pausedByServer;
  // The check's own view, under the budget's lock: when the frame last read MIN_PROGRESS, and the last question.
  private long seenFrame;
  private int seenPauses;
  private long markProgress;
  private long markNanos;
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
    if (waitingFor != Admission.NONE) {
      budget.heldWhileWaiting(this, bytes);
    } else if (admission == Admission.FRAME) {
      admittedProgress += bytes;
    } else if (admission == Admission.READ) {
      endAdmission();
    }
  }

  /**
   * The one after-read step (rules 2 and 3), with what the parser buffers, the whole size of the frame under way (0
   * when no header is decided), whether a frame completed since the last settle, and the memory set aside. Returns
   * true when reading must stop until the budget admits the connection.
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
    if (rest > 0 && bufferedNow > SMALL_READ) {
      return budget.admitNow(rest) ? admit(Admission.FRAME, rest) : await(Admission.FRAME, rest);
    }
    return (budget.waiting() > 0 || budget.over()) && await(Admission.READ, 0);
  }

  /** Waits for {@code rest}: true, unless its turn came at once. */
  private boolean await(Admission what, long rest) {
    waitingFor = what;
    long grant = budget.await(this, rest, buffered + setAside);
    if (grant < 0) {
      return true;
    }
    waitingFor = Admission.NONE;
    return admit(what, grant);
  }

  /** Admitted for {@code rest}; false, as reading goes on. */
  private boolean admit(Admission what, long rest) {
    admission = what;
    promised += rest;
    if (what == Admission.FRAME) {
      watch();
      admittedProgress = 0;
      admittedFrame++;
      holdSetAside(0);
    }
    return false;
  }

  private void endAdmission() {
    if (admission == Admission.FRAME) {
      admittedFrame++;
    }
    admission = Admission.NONE;
    long unread = promised;
    promised = 0;
    budget.release(unread);
    budget.admissionEnded(this);
  }

  private void holdSetAside(long setAsideNow) {
    long delta = setAsideNow - setAside;
    setAside = setAsideNow;
    if (delta > 0) {
      budget.reserve(delta);
    } else {
      budget.release(-delta);
    }
  }

  private void watch() {
    if (watchKey == 0) {
      watchKey = budget.watch(this);
    }
  }

  /** Reading paused for the budget, or for another reason: time the server paused a frame is not a stall. */
  public void readingPaused(boolean forBudget) {
    if (!forBudget && !pausedByServer) {
      watch();
      pausedByServer = true;
      serverPauses++;
    }
  }

  /** No reason but the budget keeps reading paused. */
  public void otherPausesCleared() {
    if (pausedByServer) {
      pausedByServer = false;
    }
  }

  /**
   * Rule 5, the most the next read may take: an admitted frame reads to its end, one let read once reads a small read,
   * others read small reads while the budget is over its limit. Never less than a small read: over TLS the socket's
   * bytes are records, which tiny reads would take apart.
   */
  public int readCap(int smallRead) {
    return switch (admission) {
      case FRAME -> (int) Math.min(Integer.MAX_VALUE, Math.max(promised, smallRead));
      case READ -> smallRead;
      case NONE -> budget.over() ? smallRead : Integer.MAX_VALUE;
    };
  }

  /** The budget is more than half spent: frames should set little memory aside. Read from any thread. */
  public boolean memoryScarce() {
    return budget.used() > budget.limit() / 2;
  }

  public BufferBudget budget() {
    return budget;
  }

  /** Counts an application's response, held whatever the budget says. */
  public void hold(int bytes) {
    budget.reserve(bytes);
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
      // A grant on its way to this loop comes back.
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
    if (watchKey != 0) {
      budget.unwatch(watchKey);
    }
  }

  // ---- called by the budget, from any thread ----

  /** Admitted from the queue: the grant is taken on the connection's own loop. */
  void admitted() {
    loop.execute(() -> {
      long grant = budget.takeGrant(this);
      Admission what = waitingFor;
      if (!closing && what != Admission.NONE) {
        waitingFor = Admission.NONE;
        admit(what, grant);
        owner.budgetHasRoom();
      }
    });
  }

  /**
   * Under the budget's lock: whether the admitted frame has gone {@code graceNanos} without reading
   * {@link #MIN_PROGRESS} bytes while the server let it read. A new admission, or a pause by the server, starts anew.
   */
  boolean frameStalled(long nowNanos, long graceNanos) {
    long frame = admittedFrame;
    long progress = admittedProgress;
    int pauses = serverPauses;
    if ((frame & 1) == 0) {
      return false;
    }
    if (frame != seenFrame || pauses != seenPauses || pausedByServer || progress - markProgress >= MIN_PROGRESS
      || nowNanos - markNanos < graceNanos) {
      if (frame != seenFrame || pauses != seenPauses || pausedByServer || progress - markProgress >= MIN_PROGRESS) {
        seenFrame = frame;
        seenPauses = pauses;
        markProgress = progress;
        markNanos = nowNanos;
      }
      return false;
    }
    markNanos = nowNanos;
    return true;
  }

  /** Under the budget's lock: whether to ask, once a grace at most, about a connection the server paused. */
  boolean askAboutItsReader(long nowNanos, long graceNanos) {
    if (!pausedByServer || nowNanos - askedNanos < graceNanos) {
      return false;
    }
    askedNanos = nowNanos;
    return true;
  }

  /** Rule 4: evicted, on its own loop, if the frame the check saw stalled is still the one admitted. */
  void evictIfStalled(long graceMs, int waiting, long used, long limit) {
    long frame = admittedFrame;
    loop.execute(() -> {
      if (!closing && admittedFrame == frame) {
        owner.budgetEvicted(buffered, graceMs, waiting, used, limit);
      }
    });
  }

  void evictIfNotReading(long graceMs, int waiting, long used, long limit) {
    loop.execute(() -> {
      if (!closing) {
        owner.evictIfNotReading(graceMs, waiting, used, limit);
      }
    });
  }
}
