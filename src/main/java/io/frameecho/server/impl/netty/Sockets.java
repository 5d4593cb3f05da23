package io.frameecho.server.impl.netty;

import io.frameecho.server.impl.connection.ConnectionSocket;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetSocket;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * Access to a socket's Netty channel and its reads as Netty buffers through {@link NetSocketInternal}, since the
 * public {@code handler(Buffer)} copies every read; and the early reads, those that arrive before a socket is attached
 * to its connection (while it waits for a slot, at the end of a TLS handshake, after a PROXY protocol header): kept on
 * the channel, delivered first, released if it closes. Any thread; reads on the event loop.
 */
final class Sockets {

  /** Reads before the socket was attached. */
  private static final AttributeKey<List<ByteBuf>> EARLY_READS = AttributeKey.valueOf("frame-echo.early-reads");
  /** The client shut down its sending side before the socket was attached. */
  static final AttributeKey<Boolean> INPUT_ENDED = AttributeKey.valueOf("frame-echo.input-ended-while-held");

  private Sockets() {
  }

  /** Vert.x's internal view of {@code socket}. */
  static NetSocketInternal internal(NetSocket socket) {
    return (NetSocketInternal) socket;
  }

  /** The Netty channel under {@code socket}. */
  static Channel channelOf(NetSocket socket) {
    return internal(socket).channelHandlerContext().channel();
  }

  /** Every read of {@code socket} goes to {@code reads}, which owns it and releases it. */
  static void readNettyBuffers(NetSocketInternal socket, Consumer<ByteBuf> reads) {
    socket.messageHandler(msg -> {
      if (msg instanceof ByteBuf bytes) {
        reads.accept(bytes);
      } else {
        ReferenceCountUtil.release(msg);
      }
    });
  }

  /** The transport {@code vertx} runs on, such as nio or epoll. */
  static String transportName(Vertx vertx) {
    String name = ((VertxInternal) vertx).transport().getClass().getSimpleName().toLowerCase(Locale.ROOT);
    return name.replace("transport", "").replace("iouring", "io_uring");
  }

  /** Whether the client shut its side before the socket was attached. */
  static boolean inputEnded(Channel channel) {
    return channel.hasAttr(INPUT_ENDED) && Boolean.TRUE.equals(channel.attr(INPUT_ENDED).get());
  }

  /** Returns a sink keeping reads for {@link #deliverEarlyReads}, released if the socket closes first. */
  static Consumer<ByteBuf> keepEarlyReads(Channel channel) {
    List<ByteBuf> early = new ArrayList<>();
    channel.attr(EARLY_READS).set(early);
    channel.closeFuture().addListener(closed -> releaseEarlyReads(channel));
    return early::add;
  }

  /** Releases the kept reads. */
  static void releaseEarlyReads(Channel channel) {
    List<ByteBuf> left = channel.attr(EARLY_READS).getAndSet(null);
    if (left != null) {
      left.forEach(ByteBuf::release);
    }
  }

  /** Delivers the early reads, then any end of input seen before; once, before anything else is read. */
  static void deliverEarlyReads(Channel channel, ConnectionSocket.Events events) {
    List<ByteBuf> early = channel.hasAttr(EARLY_READS) ? channel.attr(EARLY_READS).getAndSet(null) : null;
    if (early != null) {
      early.forEach(events::bytes);
    }
    if (inputEnded(channel)) {
      events.inputEnded();
    }
  }
}
