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
 * Netty's adaptive read sizes capped by {@link BudgetAccount#readCap}, because every readable connection reads once
 * more before pausing when the budget goes over. On the channel's event loop.
 */
public final class CappedReads implements MaxMessagesRecvByteBufAllocator {

  /** The most one read takes while the budget is over its limit. */
  static final int SMALL_READ = BudgetAccount.SMALL_READ;

  private final RecvByteBufAllocator sizes;
  /** The most the next read may take; at least a small read. */
  private IntSupplier cap;
  /** Where a read may land; null for a fresh buffer. */
  private Landing landing;

  /** Reads are small while {@code small} says so. */
  public CappedReads(RecvByteBufAllocator sizes, BooleanSupplier small) {
    this.sizes = sizes;
    this.cap = () -> small.getAsBoolean() ? SMALL_READ : Integer.MAX_VALUE;
  }

  /**
   * Installs on {@code socket} with reads small while {@code small} says so. Must run at accept, since Netty keeps the
   * allocator a channel started reading with; {@link #capFor} later sets the connection's own cap.
   */
  public static void install(NetSocket socket, BooleanSupplier small) {
    ChannelConfig config = Sockets.channelOf(socket).config();
    config.setRecvByteBufAllocator(new CappedReads(config.getRecvByteBufAllocator(), small));
  }

  /** Caps an attached connection's reads by {@code cap}; without TLS, reads land directly in the frame's memory. */
  static void capFor(Channel channel, IntSupplier cap, ConnectionSocket.Events events) {
    if (channel.config().getRecvByteBufAllocator() instanceof CappedReads capped) {
      capped.capWith(cap);
      if (channel.pipeline().get(SslHandler.class) == null && channel.pipeline().get(TlsUpgrade.TLS_HANDLER) == null) {
        capped.landIn(events::readInto);
      }
    }
  }

  /** Caps reads by {@code cap} from now on; on the channel's event loop. */
  public void capWith(IntSupplier cap) {
    this.cap = cap;
  }

  /** The guess within the cap, raised to a whole small read while the cap is small, so short reads cost no re-ask. */
  public static int readSize(int guess, IntSupplier cap) {
    if (guess > SMALL_READ) {
      return Math.min(guess, cap.getAsInt());
    }
    return guess < SMALL_READ && cap.getAsInt() <= SMALL_READ ? SMALL_READ : guess;
  }

  /** Memory for a read to land in instead of a fresh buffer, or null. */
  @FunctionalInterface
  public interface Landing {
    /** Memory of at least {@code least} bytes for the next read, or null. */
    ByteBuf readInto(ByteBufAllocator alloc, int least);
  }

  /** Lets reads land where {@code landing} says from now on; on the channel's event loop. */
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
