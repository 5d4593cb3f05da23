package io.frameecho.server.impl.netty;

import io.frameecho.server.impl.connection.ConnectionSocket;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A held socket reads nothing; what came before its connection is handed over first, then the end; or released. */
class HeldNewcomersTest {

  private final List<String> events = new ArrayList<>();

  /** A channel with a handler named as Vert.x's, which the held handler goes before. */
  private static EmbeddedChannel channel() {
    EmbeddedChannel channel = new EmbeddedChannel();
    channel.pipeline().addLast("handler", new ChannelInboundHandlerAdapter());
    return channel;
  }

  @Test
  void aHeldSocketReadsNothingUntilItIsDecidedFor() {
    EmbeddedChannel channel = channel();
    HeldNewcomers.hold(channel);
    assertFalse(channel.config().isAutoRead());
    assertTrue(channel.pipeline().get(HeldNewcomers.HELD) != null);
    HeldNewcomers.readAgain(channel);
    assertTrue(channel.config().isAutoRead());
    assertNull(channel.pipeline().get(HeldNewcomers.HELD));
  }

  @Test
  void whatWasReadComesFirstThenTheEndItsClientSentWhileHeld() {
    EmbeddedChannel channel = channel();
    HeldNewcomers.hold(channel);
    Consumer<ByteBuf> reads = HeldNewcomers.keepEarlyReads(channel);
    reads.accept(bytes("one"));
    reads.accept(bytes("two"));
    channel.pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);
    HeldNewcomers.readAgain(channel);
    assertFalse(channel.config().isAutoRead(), "nothing is left to read after the end");
    HeldNewcomers.deliverEarlyReads(channel, recorder());
    assertEquals(List.of("one", "two", "end"), events);
    events.clear();
    HeldNewcomers.deliverEarlyReads(channel, recorder());
    assertEquals(List.of("end"), events, "the reads are handed over once");
  }

  @Test
  void whatWasReadIsReleasedIfTheSocketClosesFirst() {
    EmbeddedChannel channel = channel();
    ByteBuf early = bytes("early");
    HeldNewcomers.keepEarlyReads(channel).accept(early);
    channel.close();
    assertEquals(0, early.refCnt());
    HeldNewcomers.deliverEarlyReads(channel, recorder());
    assertEquals(List.of(), events);
  }

  @Test
  void aSocketNeverHeldHasNothingToDeliver() {
    EmbeddedChannel channel = channel();
    HeldNewcomers.deliverEarlyReads(channel, recorder());
    assertEquals(List.of(), events);
    assertFalse(HeldNewcomers.inputEnded(channel));
  }

  private static ByteBuf bytes(String text) {
    return Unpooled.copiedBuffer(text, StandardCharsets.US_ASCII);
  }

  private ConnectionSocket.Events recorder() {
    return new ConnectionSocket.Events() {
      @Override
      public void bytes(ByteBuf bytes) {
        events.add(bytes.toString(StandardCharsets.US_ASCII));
        bytes.release();
      }

      @Override
      public void inputEnded() {
        events.add("end");
      }

      @Override
      public void writable() {
        events.add("writable");
      }

      @Override
      public void failed(Throwable error) {
        events.add("failed");
      }

      @Override
      public void shutdownRequested() {
        events.add("shutdown");
      }

      @Override
      public void closed() {
        events.add("closed");
      }
    };
  }
}
