package io.frameecho.server.impl.netty;

import io.frameecho.server.impl.connection.ConnectionSocket;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Reads keep Netty's adaptive size, and are small (or capped) while the condition holds, whatever that size has grown to. */
class CappedReadsTest {

  @Test
  void readsAreSmallOnlyWhileTheConditionHolds() {
    AtomicBoolean small = new AtomicBoolean();
    CappedReads reads = new CappedReads(new AdaptiveRecvByteBufAllocator(), small::get);
    RecvByteBufAllocator.ExtendedHandle handle = (RecvByteBufAllocator.ExtendedHandle) reads.newHandle();
    EmbeddedChannel channel = new EmbeddedChannel();
    // Reads that fill their buffer: the adaptive size grows, as it does for a client sending at full speed.
    for (int i = 0; i < 4; i++) {
      handle.reset(channel.config());
      ByteBuf buffer = handle.allocate(UnpooledByteBufAllocator.DEFAULT);
      handle.attemptedBytesRead(buffer.writableBytes());
      handle.lastBytesRead(buffer.writableBytes());
      handle.readComplete();
      buffer.release();
    }
    int grown = handle.guess();
    assertTrue(grown > CappedReads.SMALL_READ, "adaptive size " + grown);

    small.set(true);
    assertEquals(CappedReads.SMALL_READ, handle.guess());
    ByteBuf capped = handle.allocate(UnpooledByteBufAllocator.DEFAULT);
    assertEquals(CappedReads.SMALL_READ, capped.writableBytes());
    capped.release();

    small.set(false);
    assertEquals(grown, handle.guess());

    // A connection's own cap: the end of the frame it completes, or no cap.
    AtomicInteger cap = new AtomicInteger(1000);
    reads.capWith(cap::get);
    assertEquals(1000, handle.guess());
    cap.set(Integer.MAX_VALUE);
    assertEquals(grown, handle.guess());
    channel.finishAndReleaseAll();
  }

  @Test
  void whileReadsAreSmallAGuessOfLessTakesAWholeSmallRead() {
    AtomicBoolean small = new AtomicBoolean();
    CappedReads reads = new CappedReads(new AdaptiveRecvByteBufAllocator(), small::get);
    RecvByteBufAllocator.Handle handle = reads.newHandle();
    int first = handle.guess();
    assertTrue(first < CappedReads.SMALL_READ, "Netty's first guess " + first);
    small.set(true);
    assertEquals(CappedReads.SMALL_READ, handle.guess(), "a newcomer's first read over the limit takes a small read");
    ByteBuf read = handle.allocate(UnpooledByteBufAllocator.DEFAULT);
    assertEquals(CappedReads.SMALL_READ, read.writableBytes());
    read.release();
    small.set(false);
    assertEquals(first, handle.guess(), "without the budget's cap the channel's own guess");
  }

  @Test
  void anAttachedConnectionCapsItsReadsAndTheyLandInItsFrameUnlessATlsLayerReadsFirst() {
    ByteBuf frameMemory = UnpooledByteBufAllocator.DEFAULT.buffer(100);
    ConnectionSocket.Events events = new ConnectionSocket.Events() {
      @Override
      public ByteBuf readInto(ByteBufAllocator alloc, int least) {
        return frameMemory;
      }

      @Override
      public void bytes(ByteBuf bytes) {
      }

      @Override
      public void inputEnded() {
      }

      @Override
      public void writable() {
      }

      @Override
      public void failed(Throwable error) {
      }

      @Override
      public void shutdownRequested() {
      }

      @Override
      public void closed() {
      }
    };
    EmbeddedChannel plain = new EmbeddedChannel();
    CappedReads plainReads = new CappedReads(new AdaptiveRecvByteBufAllocator(64, 65536, 65536), () -> false);
    plain.config().setRecvByteBufAllocator(plainReads);
    CappedReads.capFor(plain, () -> 10_000, events);
    RecvByteBufAllocator.Handle handle = plainReads.newHandle();
    handle.reset(plain.config());
    assertEquals(10_000, handle.guess(), "the connection's cap");
    assertSame(frameMemory, handle.allocate(UnpooledByteBufAllocator.DEFAULT), "landed in the frame's memory");

    EmbeddedChannel tls = new EmbeddedChannel();
    tls.pipeline().addFirst(TlsUpgrade.TLS_HANDLER, new ChannelInboundHandlerAdapter());
    CappedReads tlsReads = new CappedReads(new AdaptiveRecvByteBufAllocator(64, 65536, 65536), () -> false);
    tls.config().setRecvByteBufAllocator(tlsReads);
    CappedReads.capFor(tls, () -> 10_000, events);
    RecvByteBufAllocator.Handle tlsHandle = tlsReads.newHandle();
    tlsHandle.reset(tls.config());
    assertEquals(10_000, tlsHandle.guess(), "capped all the same");
    ByteBuf own = tlsHandle.allocate(UnpooledByteBufAllocator.DEFAULT);
    assertTrue(own != frameMemory, "a TLS layer reads into a buffer of its own");
    own.release();
    frameMemory.release();
    plain.finishAndReleaseAll();
    tls.finishAndReleaseAll();
  }
}
