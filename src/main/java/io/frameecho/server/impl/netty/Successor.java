package io.frameecho.server.impl.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.channel.unix.FileDescriptor;
import io.netty.handler.ssl.SslHandler;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;

import java.util.function.Consumer;

/**
 * The old process's side of a restart with handover: a unix-socket connection to the successor's {@link Adoption},
 * over which an established socket's file descriptor is sent (SCM_RIGHTS, Netty's epoll domain-socket channel). The
 * socket is taken out of this process's epoll before it is sent, so nothing here reads it, closes it or reuses its
 * number meanwhile; once the successor holds it, this process closes its own descriptor, which sends nothing to the
 * client (the socket lives on in the successor, with the bytes the kernel still holds for it). <b>Threading:</b>
 * {@link #handOver} on the socket's event loop, which its callback runs on too; the link's writes on its own.
 */
public final class Successor {

  private final Channel link;
  private final String path;

  private Successor(Channel link, String path) {
    this.link = link;
    this.path = path;
  }

  /** A link to the successor listening at {@code path}; fails when none listens there (the file missing, or refusing). */
  public static Future<Successor> connect(Vertx vertx, String path) {
    Promise<Successor> found = Promise.promise();
    new Bootstrap().group(((VertxInternal) vertx).acceptorEventLoopGroup())
      .channel(EpollDomainSocketChannel.class)
      .handler(new ChannelInboundHandlerAdapter())
      .connect(new DomainSocketAddress(path))
      .addListener(connected -> {
        if (connected.isSuccess()) {
          found.complete(new Successor(((io.netty.channel.ChannelFuture) connected).channel(), path));
        } else {
          found.fail(connected.cause());
        }
      });
    return found.future();
  }

  /**
   * Whether {@code channel} can move at all: a plain TCP socket of the epoll transport, its output not shut down, no
   * TLS session (its keys live in this process), nothing queued that the kernel has not taken.
   */
  static boolean movable(Channel channel) {
    return channel instanceof EpollSocketChannel socket && socket.isActive() && !socket.isOutputShutdown()
      && !socket.isInputShutdown() && channel.pipeline().get(SslHandler.class) == null
      && ChannelSocket.pendingWriteBytes(channel) == 0 && channel.isRegistered();
  }

  /**
   * Moves {@code channel} to the successor: taken out of this event loop while its descriptor is sent, then back on it;
   * {@code done} is told there whether it moved, and the caller closes it at once if it did (its own descriptor only).
   */
  void handOver(Channel channel, Consumer<Boolean> done) {
    if (!link.isActive()) {
      done.accept(false);
      return;
    }
    channel.deregister().addListener(deregistered -> {
      if (!deregistered.isSuccess()) {
        done.accept(false);
        return;
      }
      int fd = ((EpollSocketChannel) channel).fd().intValue();
      link.writeAndFlush(new FileDescriptor(fd)).addListener(sent -> channel.eventLoop().execute(() ->
        // Back on its event loop, moved or not: Netty tells the pipeline of a close (and Vert.x its socket) only for a
        // registered channel. Registered and closed in one task, nothing is read from it in between.
        channel.eventLoop().register(channel).addListener(back -> done.accept(sent.isSuccess()))));
    });
  }

  /** The path the successor listens on. */
  public String path() {
    return path;
  }

  /** Ends the link once every descriptor queued on it is sent. */
  public void close() {
    link.eventLoop().execute(() -> link.writeAndFlush(io.netty.buffer.Unpooled.EMPTY_BUFFER)
      .addListener(f -> link.close()));
  }
}
