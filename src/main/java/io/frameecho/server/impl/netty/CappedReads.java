package io.frameecho.server.impl.netty;

import io.frameecho.server.impl.connection.ConnectionSocket;
import io.frameecho.server.impl.shared.BudgetAccount;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelConfig;
import io.netty.channel.MaxMessagesRecvByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.UncheckedBooleanSupplier;
import io.vertx.core.net.NetSocket;

import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;

/**
 * The channel's own read sizes (Netty's adaptive guess, up to 64 KiB), capped by what the budget allows the next read
 * ({@link BudgetAccount#readCap}): every connection still readable when the budget crosses its limit reads once more
 * before it pauses, so over the limit those reads must be small: a small read, whatever the channel guessed. Asked on the
 * channel's event loop, before each read. Set on each socket at accept ({@link #install}); the
 * connection's own cap, and where a large frame's read lands, once it is attached ({@link #capFor}).
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

  /**
   * Reads of {@code socket} are small while {@code small} says so. Set at accept, before the socket's first read: Netty
   * keeps the read sizes a channel started reading with. The connection sets its own cap when it is attached
   * ({@link #capFor}).
   */
  public static void install(NetSocket socket, BooleanSupplier small) {
    ChannelConfig config = Sockets.channelOf(socket).config();
    config.setRecvByteBufAllocator(new CappedReads(config.getRecvByteBufAllocator(), small));
  }

  /**
   * A connection attached to {@code channel}: its reads take at most what {@code cap} says, when more than a small read
   * (see {@link #install}); a read of a large frame lands in the frame's memory ({@code events}' {@code readInto}),
   * unless a TLS layer reads first (the read holds its records).
   */
  static void capFor(Channel channel, IntSupplier cap, ConnectionSocket.Events events) {
    if (channel.config().getRecvByteBufAllocator() instanceof CappedReads capped) {
      capped.capWith(cap);
      if (channel.pipeline().get(SslHandler.class) == null && channel.pipeline().get(TlsUpgrade.TLS_HANDLER) == null) {
        capped.landIn(events::readInto);
      }
    }
  }

  /** From now on a read takes at most what {@code cap} says (set on the channel's event loop). */
  public void capWith(IntSupplier cap) {
    this.cap = cap;
  }

  /**
   * A read's size, given the channel's {@code guess} and the most the budget lets it take: the guess within the cap, and,
   * while the cap is a small read, a whole small read however little the guess. Why the floor: a connection asks the
   * budget for a turn after each read that leaves its frame holding less than a small read, so a guess of a few bytes
   * (a newcomer's first read is 2 KiB; a client of small frames shrinks it further) would cost a turn per read.
   */
  public static int readSize(int guess, IntSupplier cap) {
    if (guess > SMALL_READ) {
      return Math.min(guess, cap.getAsInt());
    }
    return guess < SMALL_READ && cap.getAsInt() <= SMALL_READ ? SMALL_READ : guess;
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
      return readSize(delegate().guess(), cap);
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
