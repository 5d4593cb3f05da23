package io.frameecho.server.impl.shared;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One connection's dealings with the deployment's {@link BufferBudget}: the one seam through which it holds
 * and releases bytes. Bytes count from the moment they are read (one atomic add per read), pass with their
 * frame to its response, and are released once that is written. After each read the connection
 * {@link #settle}s the account with what its parser reports (bytes buffered, the size the header under way
 * announced): the account keeps no count of its own. Past the budget's limit the connection stops reading
 * and waits to be woken ({@link Owner#budgetHasRoom}): by a release, by the completion reserve (its frame is
 * the nearest to completion), or never, if its frame stalls while others wait: then it is evicted.
 * <p>
 * Everything but the methods marked otherwise runs on the connection's event loop. What the budget's check
 * reads from another thread (progress, bytes buffered, the frame's size, whether reading is paused) is
 * published with plain (opaque) stores, so the read path pays no fence for it; what the check decides comes
 * back through {@code loop}, the connection's own event loop.
 */
public final class BudgetAccount {

  /** What the budget tells its connection, on the connection's event loop; and the one thing it asks. */
  public interface Owner {

    /** The budget has room (or the completion reserve is this connection's): read again. */
    void budgetHasRoom();

    /** Whether reading is paused for a reason other than the budget (responses unread, answers awaited). */
    boolean pausedForOtherReason();

    /** The budget evicts this connection: its incomplete frame of {@code heldBytes} made no progress. */
    void budgetEvicted(long heldBytes, long stalledMs, int waiting, long used, long limit);

    /**
     * Its held bytes, {@code heldBytes} of them requests and responses, have not moved for {@code graceMs} while others
     * wait for the budget: the connection cuts itself if its client does not read them.
     */
    void evictIfNotReading(long heldBytes, long graceMs, int waiting, long used, long limit);
  }

  private static final VarHandle PROGRESS;
  private static final VarHandle BUFFERED;
  private static final VarHandle FRAME;
  private static final VarHandle FRAME_NUMBER;
  private static final VarHandle HELD;
  private static final VarHandle SET_ASIDE;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      PROGRESS = lookup.findVarHandle(BudgetAccount.class, "progress", long.class);
      BUFFERED = lookup.findVarHandle(BudgetAccount.class, "buffered", long.class);
      FRAME = lookup.findVarHandle(BudgetAccount.class, "frameSize", long.class);
      FRAME_NUMBER = lookup.findVarHandle(BudgetAccount.class, "frameNumber", long.class);
      HELD = lookup.findVarHandle(BudgetAccount.class, "heldBesidesReads", long.class);
      SET_ASIDE = lookup.findVarHandle(BudgetAccount.class, "setAside", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final BufferBudget budget;
  private final Executor loop;
  private final Owner owner;

  /** The parser's bytes buffered (read, not handed over in a frame), as last settled and published. */
  private long buffered;
  /** Bytes ever read: progress, as the budget's check sees it. */
  private long progress;
  /** The whole size (header included) of the frame whose header was decided, as last settled; else 0. */
  private long frameSize;
  /** Memory allocated for that frame and not filled yet, counted as held. */
  private long setAside;
  /** When that frame began to span reads, in the budget's order of frames (higher is newer). */
  private long frameNumber;
  /**
   * With {@link #progress} (every byte read), what this connection holds against the budget: plus what it holds besides
   * its reads (responses produced, memory set aside), less every byte released. Kept apart so that a read adds to one
   * count only.
   */
  private long heldBesidesReads;
  /** Reading is not paused by the server, for any reason. */
  private volatile boolean readable = true;
  /** Reading is paused for a reason other than the budget (responses unread, answers awaited): not a frame to complete now. */
  private volatile boolean pausedForOther;
  /** It held the reserve for its current frame and did not use it: others come first until that frame ends. */
  private volatile boolean reserveWasted;
  private boolean waitingForBudget;
  /** Its place in the budget's queue of waiters while it waits, else 0 (written on the connection's event loop). */
  volatile long waitTicket;
  private boolean holdingReserve;
  /** The connection is closing: nothing more is parsed, so nothing it reads is held. */
  private boolean closing;
  /** The connection has closed: it has left the budget. */
  private boolean closed;
  private final AtomicBoolean wakeQueued = new AtomicBoolean();

  /** The budget's check's own view of this account (read and written only under the check's lock). */
  long progressSeen = -1;
  long progressSeenNanos;
  long heldSeen = -1;
  long heldSeenNanos;
  /** When the check last asked whether its client reads (once a grace at most). */
  long askedNanos = Long.MIN_VALUE / 2;

  /** {@code loop} runs a task on the connection's event loop (its context's {@code runOnContext}). */
  public BudgetAccount(BufferBudget budget, Executor loop, Owner owner) {
    this.budget = budget;
    this.loop = loop;
    this.owner = owner;
    budget.register(this);
  }

  // ---- the read path ----

  /** {@code bytes} were just read, before they are parsed: they are held from now on. */
  public void received(int bytes) {
    budget.received(bytes);
    progress += bytes;
    PROGRESS.setOpaque(this, progress);
  }

  private void held(long delta) {
    heldBesidesReads += delta;
    HELD.setOpaque(this, heldBesidesReads);
  }

  /**
   * The one after-read step: what the parser now buffers and the size of the frame under way (0 when no header
   * is decided), and whether a frame completed since the last settle (its reserve, if it held it, goes back).
   * {@code setAsideNow} is memory allocated for the frame and not filled yet: held all the same, as long as the
   * connection does not read. Returns true when reading must stop until the budget has room; the account is
   * waiting by then.
   */
  public boolean settle(long bufferedNow, long frameSizeNow, boolean frameCompleted, long setAsideNow) {
    if (closing) {
      return false;
    }
    if (setAsideNow != setAside) {
      holdSetAside(setAsideNow);
    }
    if (frameCompleted) {
      if (reserveWasted) {
        // Read first: a volatile store on every read would cost a fence.
        reserveWasted = false;
        budget.wastedFrameEnded();
      }
      if (holdingReserve) {
        holdingReserve = false;
        budget.returnReserve(this);
      }
    }
    publish(bufferedNow, frameSizeNow, frameCompleted);
    if (waitingForBudget || !(holdingReserve ? budget.overForCompletion() : budget.over())) {
      return false;
    }
    waitingForBudget = true;
    readable = false;
    budget.await(this);
    return true;
  }

  private void holdSetAside(long setAsideNow) {
    long delta = setAsideNow - setAside;
    SET_ASIDE.setOpaque(this, setAsideNow);
    // Counted with the incomplete frames, not with responses: nothing releases it but the frame's own reads.
    budget.bufferedChanged(delta);
    held(delta);
    if (delta > 0) {
      budget.reserve(delta);
    } else {
      budget.release(-delta);
    }
  }

  private void publish(long bufferedNow, long frameSizeNow, boolean frameCompleted) {
    long delta = bufferedNow - buffered;
    if (delta != 0) {
      budget.bufferedChanged(delta);
      BUFFERED.setOpaque(this, bufferedNow);
    }
    if (frameSizeNow != 0 && (frameSize == 0 || frameCompleted)) {
      FRAME_NUMBER.setOpaque(this, budget.nextFrameNumber());
    }
    if (frameSizeNow != frameSize) {
      FRAME.setOpaque(this, frameSizeNow);
    }
  }

  /**
   * The server paused reading: a paused connection is not stalled. Paused for anything but the budget (its
   * responses not read, answers awaited), it gives the completion reserve back to the next waiting connection
   * rather than sit on it.
   */
  public void readingPaused(boolean forBudget) {
    readable = false;
    if (!forBudget && !pausedForOther) {
      pausedForOther = true;
    }
    if (holdingReserve && !forBudget) {
      holdingReserve = false;
      budget.returnReserve(this);
    }
  }

  /** Every reason to pause has cleared: the connection reads again. */
  public void readingResumed() {
    readable = true;
    otherPausesCleared();
  }

  /** No reason but the budget keeps reading paused any more: the completion reserve may be offered to it again. */
  public void otherPausesCleared() {
    if (pausedForOther) {
      pausedForOther = false;
    }
  }

  // ---- woken (called from any thread; the work hops to the connection's event loop) ----

  void wakeSoon() {
    if (wakeQueued.compareAndSet(false, true)) {
      loop.execute(() -> {
        wakeQueued.set(false);
        wake();
      });
    }
  }

  private void wake() {
    if (waitingForBudget && !closing && !(holdingReserve ? budget.overForCompletion() : budget.over())) {
      stopWaiting();
    }
  }

  private void stopWaiting() {
    waitingForBudget = false;
    budget.leave(this);
    owner.budgetHasRoom();
  }

  /**
   * The completion reserve is this connection's: it reads on until its frame is complete. A release may
   * have woken it before this runs; reading again, it keeps the reserve all the same, or the next
   * connection to pause would take it, nearest to completion or not.
   */
  void reserveGranted() {
    loop.execute(() -> {
      if (closing || buffered == 0 || owner.pausedForOtherReason()) {
        budget.returnReserve(this);
        return;
      }
      holdingReserve = true;
      if (waitingForBudget && !budget.overForCompletion()) {
        stopWaiting();
      }
    });
  }

  /**
   * The check found this connection holding the reserve while others wait, and free to read, but reading
   * too little to deserve it (a staller, or a trickler): the reserve goes to the next in line, and this
   * frame goes behind the others for it. The connection keeps reading under the limit, and its grace goes
   * on running: a stalled one is still evicted.
   */
  void yieldReserve() {
    loop.execute(() -> {
      if (holdingReserve) {
        holdingReserve = false;
        if (!reserveWasted) {
          reserveWasted = true;
          budget.wastedFrameHeld();
        }
        budget.returnReserve(this);
      }
    });
  }

  /** The check found this connection stalled at {@code seenProgress}: evicted if it still is, on its own loop. */
  void evictIfStalled(long seenProgress, long stalledMs, int waiting, long used, long limit) {
    loop.execute(() -> {
      if (!closing && !waitingForBudget && readable && buffered > 0 && progress == seenProgress) {
        owner.budgetEvicted(buffered, stalledMs, waiting, used, limit);
      }
    });
  }

  /** The check found this connection's responses unmoved for {@code graceMs}: its connection looks at its client. */
  void evictIfNotReading(long heldBytes, long graceMs, int waiting, long used, long limit) {
    loop.execute(() -> {
      if (!closed) {
        owner.evictIfNotReading(heldBytes, graceMs, waiting, used, limit);
      }
    });
  }

  // ---- read by the budget's check, from another thread ----

  /**
   * Called under the check's lock: notes progress, and whether the connection may be stalled (it holds an
   * incomplete frame, is free to read, and has read nothing since the last look).
   */
  boolean observe(long nowNanos) {
    long seen = progress();
    if (seen != progressSeen || !readable) {
      progressSeen = seen;
      progressSeenNanos = nowNanos;
      return false;
    }
    return bufferedBytes() > 0;
  }

  /**
   * Called under the check's lock: notes when the bytes this connection holds last changed, and whether they have
   * stood still since the last look with some of them in requests or responses (which, while its client reads
   * nothing, are never written, so never released).
   */
  boolean responsesStill(long nowNanos) {
    long seen = heldBytes();
    if (seen != heldSeen) {
      heldSeen = seen;
      heldSeenNanos = nowNanos;
      return false;
    }
    return responseBytes() > 0;
  }

  /** Bytes held in requests handed over and responses not yet written, as last published. */
  long responseBytes() {
    return heldBytes() - bufferedBytes() - (long) SET_ASIDE.getOpaque(this);
  }

  /** Every byte this connection holds against the budget, as last published. */
  private long heldBytes() {
    return progress() + (long) HELD.getOpaque(this);
  }

  /** Bytes read and not handed over in a frame yet, as last published. */
  long bufferedBytes() {
    return (long) BUFFERED.getOpaque(this);
  }

  /** Bytes ever read, as last published. */
  long progress() {
    return (long) PROGRESS.getOpaque(this);
  }

  boolean readable() {
    return readable;
  }

  boolean reserveWasted() {
    return reserveWasted;
  }

  /**
   * Paused for a reason other than the budget: offered the reserve, it would hand it straight back (found by a trial:
   * a waiter whose 16 MiB response filled its write queue was granted and gave back the reserve 390 million times).
   */
  boolean pausedForOther() {
    return pausedForOther;
  }

  /** When the frame under way began to span reads, in the budget's order of frames: higher is newer. */
  long frameNumber() {
    return (long) FRAME_NUMBER.getOpaque(this);
  }

  /** Bytes still to read before the frame under way is complete; large when its header is not decided yet. */
  long remainingBytes() {
    long frame = (long) FRAME.getOpaque(this);
    return frame > 0 ? Math.max(0, frame - bufferedBytes()) : Integer.MAX_VALUE;
  }

  /**
   * The most this connection's next read may take: {@code smallRead} while the budget is over its limit, since each read
   * before it pauses carries the budget further past it; the completion reserve's holder reads on at full size, but no
   * further than the end of its frame, or a small read: a read past it would start the next frame past the limit (found
   * by a test: 128 holders in turn each carried a piece of their next frame over, 1.4 MiB past a 1 MiB budget). Never
   * less than a small read: over TLS the socket's bytes are records, which a tiny read would take apart a few bytes a
   * time. On the connection's event loop.
   */
  public int readCap(int smallRead) {
    if (!budget.over()) {
      return Integer.MAX_VALUE;
    }
    // A frame, header included, is at most Integer.MAX_VALUE bytes (Frames.LARGEST_PAYLOAD and its header).
    return holdingReserve && frameSize > 0 ? (int) Math.max(frameSize - buffered, smallRead) : smallRead;
  }

  /** The budget is more than half spent: frames should set little memory aside. Read from any thread. */
  public boolean memoryScarce() {
    return budget.used() > budget.limit() / 2;
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
   * The connection is closing with {@code bufferedNow} bytes in its parser: nothing more will be parsed, so
   * they are released now (a lingering close may take a while); its wait for budget, and the reserve, end.
   */
  public void closing(long bufferedNow) {
    if (closing) {
      return;
    }
    closing = true;
    if (reserveWasted) {
      reserveWasted = false;
      budget.wastedFrameEnded();
    }
    publish(0, 0, false);
    holdSetAside(0);
    held(-bufferedNow);
    budget.release(bufferedNow);
    if (waitingForBudget) {
      waitingForBudget = false;
      budget.leave(this);
    }
    if (holdingReserve) {
      holdingReserve = false;
      budget.returnReserve(this);
    }
  }

  /** The connection closed with {@code bufferedNow} bytes in its parser: they are released, and it leaves the budget. */
  public void close(long bufferedNow) {
    closed = true;
    closing(bufferedNow);
    budget.unregister(this);
  }
}
