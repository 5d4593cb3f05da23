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
 * Vert.x's internal view of a socket ({@link NetSocketInternal}, which Vert.x exports to every module as its unsupported internal API): its Netty
 * channel, and its reads as Netty's buffers. The public {@code handler(Buffer)} copies every read into a heap buffer;
 * frames are sliced out of Netty's own buffer instead. Stateless: any thread; {@link #readNettyBuffers} on the
 * socket's event loop.
 */
final class Sockets {

  private Sockets() {
  }

  /** Vert.x's own view of {@code socket}, which every Vert.x 5 socket has. */
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

  /** The transport {@code vertx} runs on: nio, epoll, io_uring (or kqueue). */
  static String transportName(Vertx vertx) {
    String name = ((VertxInternal) vertx).transport().getClass().getSimpleName().toLowerCase(Locale.ROOT);
    return name.replace("transport", "").replace("iouring", "io_uring");
  }
}
