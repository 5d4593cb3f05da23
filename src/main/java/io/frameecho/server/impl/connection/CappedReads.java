package io.frameecho.server.impl.connection;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.MaxMessagesRecvByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;

import java.util.function.BooleanSupplier;

/**
 * The channel's own read sizes (Netty's adaptive guess, up to 64 KiB), capped at {@value #SMALL_READ} bytes while
 * {@link #small} says so: while the buffer budget is over its limit. Every connection still readable when the budget
 * crosses its limit reads once more before it pauses; at the adaptive size, 5,000 quiet holders carried the budget
 * 319 MiB past it that way. Asked on every read, on the channel's event loop.
 */
final class CappedReads implements MaxMessagesRecvByteBufAllocator {

  /** The most one read takes while the budget is over its limit. */
  static final int SMALL_READ = 4096;

  private final RecvByteBufAllocator sizes;
  private BooleanSupplier small;

  CappedReads(RecvByteBufAllocator sizes, BooleanSupplier small) {
    this.sizes = sizes;
    this.small = small;
  }

  /** From now on reads are small while {@code small} says so (set on the channel's event loop). */
  void smallWhen(BooleanSupplier small) {
    this.small = small;
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
      return guess > SMALL_READ && small.getAsBoolean() ? SMALL_READ : guess;
    }

    @Override
    public ByteBuf allocate(ByteBufAllocator alloc) {
      return alloc.ioBuffer(guess());
    }

    @Override
    public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
      return ((ExtendedHandle) delegate()).continueReading(maybeMoreDataSupplier);
    }
  }
}
