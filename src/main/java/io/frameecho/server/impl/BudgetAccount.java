package io.frameecho.server.impl;

import io.frameecho.protocol.Frames;
import io.vertx.core.Context;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One connection's dealings with the process's {@link BufferBudget}: the one seam through which it holds
 * and releases bytes. Bytes count from the moment they are read (one atomic add per read), pass with their
 * frame to its response, and are released once that is written. Past the budget's limit the connection
 * stops reading and waits to be woken: by a release, by the completion reserve (its frame is the nearest
 * to completion), or never, if its frame stalls while others wait: then it is evicted.
 * <p>
 * Everything but the methods marked otherwise runs on the connection's event loop. What the budget's
 * check reads from another thread (progress, bytes held, the frame's size, whether reading is paused) is
 * published with plain (opaque) stores, so the read path pays no fence for it.
 */
final class BudgetAccount {

  /** What an eviction asks of the connection. */
  interface Owner {
    /** The budget evicts this connection: its incomplete frame of {@code heldBytes} made no progress. */
    void budgetEvicted(long heldBytes, long stalledMs, int waiting, long used, long limit);
  }

  private static final VarHandle PROGRESS;
  private static final VarHandle UNPARSED;
  private static final VarHandle FRAME;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      PROGRESS = lookup.findVarHandle(BudgetAccount.class, "progress", long.class);
      UNPARSED = lookup.findVarHandle(BudgetAccount.class, "unparsedCounted", long.class);
      FRAME = lookup.findVarHandle(BudgetAccount.class, "frameBytesPublished", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final BufferBudget budget;
  private final Context context;
  private final ReadGate gate;
  private final Owner owner;

  /** Bytes read and not handed over in a frame yet: the frame being assembled, or frames a paused parser holds. */
  private long unparsed;
  /** {@link #unparsed} as last added to the budget's count (and published). */
  private long unparsedCounted;
  /** Bytes ever read: progress, as the budget's check sees it. */
  private long progress;
  /** The whole size (header included) of the frame whose header was decided, until it is handed over; else 0. */
  private long frameBytes;
  private long frameBytesPublished;
  /** Reading is not paused by the server, for any reason. */
  private volatile boolean readable = true;
  /** It held the reserve for its current frame and did not use it: others come first until that frame ends. */
  private volatile boolean reserveWasted;
  private boolean waitingForBudget;
  private boolean holdingReserve;
  /** The connection is closing: nothing more is parsed, so nothing it reads is held. */
  private boolean closing;
  private final AtomicBoolean wakeQueued = new AtomicBoolean();

  /** The budget's check's own view of this account (read and written only under the check's lock). */
  long progressSeen = -1;
  long progressSeenNanos;

  BudgetAccount(BufferBudget budget, Context context, ReadGate gate, Owner owner) {
    this.budget = budget;
    this.context = context;
    this.gate = gate;
    this.owner = owner;
    budget.register(this);
  }

  // ---- the read path ----

  /** {@code bytes} were just read, before they are parsed: they are held from now on. */
  void received(int bytes) {
    budget.received(bytes);
    unparsed += bytes;
    progress += bytes;
    PROGRESS.setOpaque(this, progress);
  }

  /** A header announced {@code length} body bytes (held only as they arrive). */
  void bodyAnnounced(int length) {
    frameBytes = (long) length + Frames.HEADER_SIZE;
  }

  /** A whole frame of {@code bytes} (header included) is handed over: what it holds passes to its response. */
  void frameTaken(int bytes) {
    unparsed -= bytes;
    frameBytes = 0;
    if (reserveWasted) {
      // Read first: a volatile store on every frame would cost a fence.
      reserveWasted = false;
    }
    if (holdingReserve) {
      holdingReserve = false;
      budget.returnReserve(this);
    }
  }

  /** The parser has parsed what it could: the count of unparsed bytes is brought up to date (once per read). */
  void parsed() {
    long delta = unparsed - unparsedCounted;
    if (delta != 0) {
      budget.unparsedChanged(delta);
      UNPARSED.setOpaque(this, unparsed);
    }
    if (frameBytes != frameBytesPublished) {
      FRAME.setOpaque(this, frameBytes);
    }
  }

  /** A read has been parsed: past the budget, reading stops until the budget has room. */
  void readDone() {
    parsed();
    if (closing || waitingForBudget) {
      return;
    }
    if (holdingReserve ? budget.overForCompletion() : budget.over()) {
      waitingForBudget = true;
      gate.pause(ReadGate.Reason.OVER_BUFFER_BUDGET);
      budget.await(this, context.owner());
    }
  }

  /**
   * The server paused reading for {@code reason}: a paused connection is not stalled. Paused for anything
   * but the budget (its responses not read, answers awaited), it gives the completion reserve back to the
   * next waiting connection rather than sit on it.
   */
  void readingPaused(ReadGate.Reason reason) {
    readable = false;
    if (holdingReserve && reason != ReadGate.Reason.OVER_BUFFER_BUDGET) {
      holdingReserve = false;
      budget.returnReserve(this);
    }
  }

  /** Every reason to pause has cleared: the connection reads again. */
  void readingResumed() {
    readable = true;
  }

  // ---- woken (called from any thread; the work hops to the connection's event loop) ----

  void wakeSoon() {
    if (wakeQueued.compareAndSet(false, true)) {
      context.runOnContext(v -> {
        wakeQueued.set(false);
        wake();
      });
    }
  }

  private void wake() {
    if (waitingForBudget && !closing && !(holdingReserve ? budget.overForCompletion() : budget.over())) {
      resumeReading();
    }
  }

  private void resumeReading() {
    waitingForBudget = false;
    budget.leave(this);
    gate.resume(ReadGate.Reason.OVER_BUFFER_BUDGET);
  }

  /**
   * The completion reserve is this connection's: it reads on until its frame is complete. A release may
   * have woken it before this runs; reading again, it keeps the reserve all the same, or the next
   * connection to pause would take it, nearest to completion or not.
   */
  void reserveGranted() {
    context.runOnContext(v -> {
      if (closing || unparsed == 0 || gate.isPausedForOtherThan(ReadGate.Reason.OVER_BUFFER_BUDGET)) {
        budget.returnReserve(this);
        return;
      }
      holdingReserve = true;
      if (waitingForBudget && !budget.overForCompletion()) {
        resumeReading();
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
    context.runOnContext(v -> {
      if (holdingReserve) {
        holdingReserve = false;
        reserveWasted = true;
        budget.returnReserve(this);
      }
    });
  }

  /** The check found this connection stalled at {@code seenProgress}: evicted if it still is, on its own loop. */
  void evictIfStalled(long seenProgress, long stalledMs, int waiting, long used, long limit) {
    context.runOnContext(v -> {
      if (!closing && !waitingForBudget && gate.isOpen() && unparsed > 0 && progress == seenProgress) {
        owner.budgetEvicted(unparsed, stalledMs, waiting, used, limit);
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
    return unparsedBytes() > 0;
  }

  long unparsedBytes() {
    return (long) UNPARSED.getOpaque(this);
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

  /** Bytes still to read before the frame under way is complete; large when its header is not decided yet. */
  long remainingBytes() {
    long frame = (long) FRAME.getOpaque(this);
    return frame > 0 ? Math.max(0, frame - unparsedBytes()) : Integer.MAX_VALUE;
  }

  // ---- responses ----

  /** Counts bytes held whatever the budget says (a response already produced). */
  void hold(int bytes) {
    budget.reserve(bytes);
  }

  void release(int bytes) {
    budget.release(bytes);
  }

  // ---- the end ----

  /**
   * The connection is closing: nothing more will be parsed, so what it has read is released now (a
   * lingering close may take a while); its wait for budget, and the reserve, end.
   */
  void closing() {
    closing = true;
    long held = unparsed;
    unparsed = 0;
    parsed();
    budget.release(held);
    if (waitingForBudget) {
      waitingForBudget = false;
      budget.leave(this);
    }
    if (holdingReserve) {
      holdingReserve = false;
      budget.returnReserve(this);
    }
  }

  /** The connection closed: whatever it still held unparsed is released, and it leaves the budget. */
  void close() {
    closing();
    budget.unregister(this);
  }
}
