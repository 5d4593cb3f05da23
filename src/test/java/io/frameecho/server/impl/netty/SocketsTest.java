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

/** What a socket read before its connection is handed over first, then the end its client sent; or released. */
class SocketsTest {

  private final List<String> events = new ArrayList<>();

  /** A channel with a handler named as Vert.x's, which the held handler goes before. */
  private static EmbeddedChannel channel() {
    EmbeddedChannel channel = new EmbeddedChannel();
    channel.pipeline().addLast("handler", new ChannelInboundHandlerAdapter());
    return channel;
  }

  @Test
  void whatWasReadComesFirstThenTheEndItsClientSentWhileHeld() {
    EmbeddedChannel channel = channel();
    WaitingSockets.hold(channel);
    Consumer<ByteBuf> reads = Sockets.keepEarlyReads(channel);
    reads.accept(bytes("one"));
    reads.accept(bytes("two"));
    channel.pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);
    WaitingSockets.readAgain(channel);
    assertFalse(channel.config().isAutoRead(), "nothing is left to read after the end");
    Sockets.deliverEarlyReads(channel, recorder());
    assertEquals(List.of("one", "two", "end"), events);
    events.clear();
    Sockets.deliverEarlyReads(channel, recorder());
    assertEquals(List.of("end"), events, "the reads are handed over once");
  }

  @Test
  void whatWasReadIsReleasedIfTheSocketClosesFirst() {
    EmbeddedChannel channel = channel();
    ByteBuf early = bytes("early");
    Sockets.keepEarlyReads(channel).accept(early);
    channel.close();
    assertEquals(0, early.refCnt());
    Sockets.deliverEarlyReads(channel, recorder());
    assertEquals(List.of(), events);
  }

  @Test
  void aSocketNeverHeldHasNothingToDeliver() {
    EmbeddedChannel channel = channel();
    Sockets.deliverEarlyReads(channel, recorder());
    assertEquals(List.of(), events);
    assertFalse(Sockets.inputEnded(channel));
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
