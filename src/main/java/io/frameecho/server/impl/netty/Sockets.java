package io.frameecho.server.impl.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetSocket;

import java.util.Locale;
import java.util.function.Consumer;

/**
 * Access to a socket's Netty channel and its reads as Netty buffers through {@link NetSocketInternal}, since the
 * public {@code handler(Buffer)} copies every read. Any thread; {@link #readNettyBuffers} on the event loop.
 */
final class Sockets {

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
}
