package io.frameecho.server.impl.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.channel.unix.FileDescriptor;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * The old process's side of a restart with handover: a unix-socket connection to the successor's {@link Adoption},
 * over which an established socket's file descriptor is sent (SCM_RIGHTS, Netty's epoll domain-socket channel). The
 * socket is taken out of this process's epoll before it is sent, so nothing here reads it, closes it or reuses its
 * number meanwhile; once the successor holds it, this process closes its own descriptor, which sends nothing to the
 * client (the socket lives on in the successor, with the bytes the kernel still holds for it).
 * <p>
 * At most {@link #WINDOW} descriptors are on their way at a time: the successor acknowledges each one it has read
 * with a byte. A unix socket's send buffer holds a few hundred of them; when it is full, Netty's epoll domain socket
 * (4.2.18) does not wait for room, it fails the write and shuts the link's output down, and every later descriptor
 * fails (5,000 connections: 316 and 489 moved in two runs, the rest closed). <b>Threading:</b> {@link #handOver} on
 * the socket's event loop, which its callback runs on too; the window on the link's event loop.
 */
public final class Successor {

  private static final Logger log = LoggerFactory.getLogger("io.frameecho.server.FrameEchoServer");
  /** Descriptors sent and not acknowledged yet, at most. */
  static final int WINDOW = 64;

  private final Channel link;
  private final String path;
  /** Descriptors waiting for room in the window; on the link's event loop. */
  private final ArrayDeque<Pending> waiting = new ArrayDeque<>();
  /** Descriptors sent and not acknowledged; on the link's event loop. */
  private int unacknowledged;
  /** The first descriptor that could not be sent is logged, once. */
  private boolean failed;
  /** Completed once the link has closed; {@link #close} closes it when every descriptor sent is acknowledged. */
  private final Promise<Void> closed = Promise.promise();
  private boolean closing;

  /** A descriptor to send, and whom to tell whether it went. */
  private record Pending(int fd, Consumer<Boolean> sent) {
  }

  private Successor(Channel link, String path) {
    this.link = link;
    this.path = path;
  }

  /** A link to the successor listening at {@code path}; fails when none listens there (the file missing, or refusing). */
  public static Future<Successor> connect(Vertx vertx, String path) {
    Promise<Successor> found = Promise.promise();
    Successor[] self = new Successor[1];
    Bootstrap bootstrap = new Bootstrap().group(((VertxInternal) vertx).acceptorEventLoopGroup())
      .channel(EpollDomainSocketChannel.class)
      .handler(new ChannelInboundHandlerAdapter() {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
          if (msg instanceof ByteBuf acks && self[0] != null) {
            self[0].acknowledged(acks.readableBytes());
          }
          ReferenceCountUtil.release(msg);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
          if (self[0] != null) {
            self[0].linkClosed();
          }
          super.channelInactive(ctx);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
          ctx.close();
        }
      });
    bootstrap.connect(new DomainSocketAddress(path)).addListener(connected -> {
      if (connected.isSuccess()) {
        self[0] = new Successor(((ChannelFuture) connected).channel(), path);
        found.complete(self[0]);
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
      Pending pending = new Pending(fd, sent -> channel.eventLoop().execute(() ->
        // Back on its event loop, moved or not: Netty tells the pipeline of a close (and Vert.x its socket) only for a
        // registered channel. Registered and closed in one task, nothing is read from it in between.
        channel.eventLoop().register(channel).addListener(back -> done.accept(sent))));
      link.eventLoop().execute(() -> {
        waiting.add(pending);
        sendWhileRoom();
      });
    });
  }

  private void sendWhileRoom() {
    while (unacknowledged < WINDOW && !waiting.isEmpty()) {
      Pending pending = waiting.poll();
      if (!link.isActive()) {
        pending.sent.accept(false);
        continue;
      }
      unacknowledged++;
      link.writeAndFlush(new FileDescriptor(pending.fd)).addListener(sent -> {
        if (!sent.isSuccess() && !failed) {
          failed = true;
          log.warn("handover on {}: a connection could not be sent to the successor ({}); it and those that cannot "
            + "follow close as without handover", path, sent.cause().toString());
        }
        pending.sent.accept(sent.isSuccess());
      });
    }
  }

  private void acknowledged(int count) {
    unacknowledged = Math.max(0, unacknowledged - count);
    sendWhileRoom();
    closeIfAllAcknowledged();
  }

  private void closeIfAllAcknowledged() {
    if (closing && unacknowledged == 0 && waiting.isEmpty()) {
      link.close();
    }
  }

  private void linkClosed() {
    closed.tryComplete();
    Pending pending;
    while ((pending = waiting.poll()) != null) {
      pending.sent.accept(false);
    }
  }

  /** The path the successor listens on. */
  public String path() {
    return path;
  }

  /**
   * Ends the link once the successor has acknowledged every descriptor sent (every connection has been handed over
   * or closed by now): a descriptor the successor has not read yet would be closed with the link, and its connection
   * with it. Completes once the link is closed, or after {@code maxWaitMs} (the link is closed then).
   */
  public Future<Void> close(Vertx vertx, long maxWaitMs) {
    link.eventLoop().execute(() -> {
      closing = true;
      closeIfAllAcknowledged();
    });
    long timer = vertx.setTimer(maxWaitMs, id -> link.close());
    return closed.future().onComplete(ar -> vertx.cancelTimer(timer));
  }
}
