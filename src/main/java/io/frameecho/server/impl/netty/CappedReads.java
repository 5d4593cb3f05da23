package io.frameecho.server.impl.netty;

import io.frameecho.server.impl.shared.BudgetAccount;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.MaxMessagesRecvByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;

import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;

/**
 * The channel's own read sizes (Netty's adaptive guess, up to 64 KiB), capped by what the budget allows the next read
 * ({@link BudgetAccount#readCap}): every connection still readable when the budget crosses its limit reads once more
 * before it pauses, so over the limit those reads must be small. Asked only for reads larger than a small one, on the
 * channel's event loop: the echo of small frames never asks.
 */
public final class CappedReads implements MaxMessagesRecvByteBufAllocator {

  /** The most one read takes while the budget is over its limit. */
  static final int SMALL_READ = BudgetAccount.SMALL_READ;

  private final RecvByteBufAllocator sizes;
  /** The most the next read may take: a small read at least. */
  private IntSupplier cap;
  /** Where a read may land; null: always a buffer of its own. */
  private Landing landing;

  /** Reads are small while {@code small} says so. */
  public CappedReads(RecvByteBufAllocator sizes, BooleanSupplier small) {
    this.sizes = sizes;
    this.cap = () -> small.getAsBoolean() ? SMALL_READ : Integer.MAX_VALUE;
  }

  /** From now on a read takes at most what {@code cap} says (set on the channel's event loop). */
  public void capWith(IntSupplier cap) {
    this.cap = cap;
  }

  /** Where a read may land instead of a buffer of its own: given the allocator and the read's guess, memory or null. */
  @FunctionalInterface
  public interface Landing {
    ByteBuf readInto(ByteBufAllocator alloc, int least);
  }

  /** From now on a read lands where {@code landing} says, when it says (set on the channel's event loop). */
  public void landIn(Landing landing) {
    this.landing = landing;
  }

  @Override
  public Handle newHandle() {
    return new CappedHandle((ExtendedHandle) sizes.newHandle());
  }

  @Override
  public int maxMessagesPerRead() {
    return sizes instanceof MaxMessagesRecvByteBufAllocator m ? m.maxMessagesPerRead() : 1;
  }

  @Override
  public MaxMessagesRecvByteBufAllocator maxMessagesPerRead(int maxMessagesPerRead) {
    if (sizes instanceof MaxMessagesRecvByteBufAllocator m) {
      m.maxMessagesPerRead(maxMessagesPerRead);
    }
    return this;
  }

  private final class CappedHandle extends DelegatingHandle implements ExtendedHandle {

    CappedHandle(ExtendedHandle sizes) {
      super(sizes);
    }

    @Override
    public int guess() {
      int guess = delegate().guess();
      // A read no larger than a small one is never capped: the echo of small frames does not ask.
      return guess > SMALL_READ ? Math.min(guess, cap.getAsInt()) : guess;
    }

    @Override
    public ByteBuf allocate(ByteBufAllocator alloc) {
      int guess = guess();
      ByteBuf into = landing == null ? null : landing.readInto(alloc, guess);
      return into != null ? into : alloc.ioBuffer(guess);
    }

    @Override
    public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
      return ((ExtendedHandle) delegate()).continueReading(maybeMoreDataSupplier);
    }
  }
}
