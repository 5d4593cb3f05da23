package io.frameecho.server.impl;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The process-wide budget of bytes held in frames being read and responses being written, shared by every
 * connection on every event loop. A connection reserves a frame's length when its header arrives, before
 * the body is read; when the budget is spent it stops reading and asks to be told when bytes are released.
 * Nobody fails and nothing is lost: memory stays bounded by waiting.
 */
public final class BufferBudget {

  private final long limit;
  private final AtomicLong used = new AtomicLong();
  /** The most ever held at once; updated without a lock, so it may trail a concurrent peak by one frame. */
  private volatile long peak;
  private final ConcurrentLinkedQueue<Runnable> waiting = new ConcurrentLinkedQueue<>();

  public BufferBudget(long limit) {
    this.limit = limit;
  }

  public long limit() {
    return limit;
  }

  public long used() {
    return used.get();
  }

  /**
   * Reserves {@code bytes} if they fit. A reservation larger than the whole budget still succeeds when
   * nothing else is held, so that one frame of up to {@code maxFrameSize} can always be served.
   */
  public boolean tryReserve(long bytes) {
    while (true) {
      long now = used.get();
      if (now > 0 && now + bytes > limit) {
        return false;
      }
      if (used.compareAndSet(now, now + bytes)) {
        notePeak(now + bytes);
        return true;
      }
    }
  }

  /** Counts bytes that are held whatever the budget says (responses already produced). */
  public void reserve(long bytes) {
    notePeak(used.addAndGet(bytes));
  }

  private void notePeak(long now) {
    if (now > peak) {
      peak = now;
    }
  }

  public long peak() {
    return peak;
  }

  public void release(long bytes) {
    if (bytes == 0) {
      return;
    }
    used.addAndGet(-bytes);
    Runnable next;
    while ((next = waiting.poll()) != null) {
      next.run();
    }
  }

  /**
   * Runs {@code retry} (on the releasing thread: it should hop to its own event loop) after the next
   * release; a retry that still does not fit asks again.
   */
  public void whenReleased(Runnable retry) {
    waiting.add(retry);
    // A release may have happened between the failed reservation and this registration.
    if (used.get() < limit) {
      Runnable next;
      while ((next = waiting.poll()) != null) {
        next.run();
      }
    }
  }
}
