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
import io.netty.channel.unix.Socket;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.Context;
import io.vertx.core.internal.ContextInternal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The old process's side of a restart with handover: a unix-socket connection to the successor's {@link Adoption},
 * over which an established socket's file descriptor is sent (SCM_RIGHTS). The descriptor is sent and then closed in
 * one task of the socket's event loop, so nothing here reads the socket, closes it or reuses its number in between;
 * closing this process's descriptor once the successor holds the socket sends nothing to the client (the socket lives
 * on in the successor, with the bytes the kernel still holds for it). Netty takes the socket out of this process's
 * epoll before it closes the descriptor. Only a successor that runs as this process's user is sent anything.
 * <p>
 * Each descriptor is sent by the socket's event loop itself, on the link's socket (a {@code sendmsg} of one byte and
 * the descriptor): writing a descriptor through the link's channel would send it later, from the link's event loop,
 * when this process may have closed that descriptor and reused its number. At most {@link #WINDOW} descriptors are on
 * their way at a time (the successor acknowledges each one it has read with a byte), and a socket that finds the window
 * full, or the link's send buffer full, tries again a millisecond later, its reading off meanwhile. (Netty 4.2.18's
 * epoll domain socket, written to when its send buffer is full, fails the write and shuts the link's output down: 316
 * and 489 of 5,000 moved in two runs, the rest closed.) <b>Threading:</b> {@link #handOver} on the socket's event
 * loop, which its callback runs on too; the acknowledgements on the link's event loop.
 */
public final class Successor {

  private static final Logger log = LoggerFactory.getLogger("io.frameecho.server.FrameEchoServer");
  /** Descriptors sent and not acknowledged yet, at most. */
  static final int WINDOW = 64;
  /** How long a socket that found no room waits before it tries again. */
  private static final long RETRY_MS = 1;

  private final Channel link;
  private final Socket linkSocket;
  private final String path;
  /** Descriptors sent and not acknowledged. */
  private final AtomicInteger unacknowledged = new AtomicInteger();
  /** The first descriptor that could not be sent is logged, once. */
  private final AtomicBoolean failed = new AtomicBoolean();
  /** Completed once the link has closed; {@link #close} closes it when every descriptor sent is acknowledged. */
  private final Promise<Void> closed = Promise.promise();
  private volatile boolean closing;

  private Successor(Channel link, String path) {
    this.link = link;
    this.linkSocket = (Socket) ((EpollDomainSocketChannel) link).fd();
    this.path = path;
  }

  /**
   * A link to the successor listening at {@code path}; fails when none listens there (the file missing, or refusing),
   * or when the process that does runs as another user than {@code uid}: this process's clients are not handed to it.
   */
  public static Future<Successor> connect(Context context, String path, int uid) {
    Promise<Successor> found = Promise.promise();
    Successor[] self = new Successor[1];
    // The server's own event loop: nothing else of Vert.x's is started for the link.
    Bootstrap bootstrap = new Bootstrap().group(((ContextInternal) context).nettyEventLoop())
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
            self[0].closed.tryComplete();
          }
          super.channelInactive(ctx);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
          ctx.close();
        }
      });
    bootstrap.connect(new DomainSocketAddress(path)).addListener(connected -> {
      if (!connected.isSuccess()) {
        found.fail(connected.cause());
        return;
      }
      EpollDomainSocketChannel link = (EpollDomainSocketChannel) ((ChannelFuture) connected).channel();
      int peer;
      try {
        peer = link.peerCredentials().uid();
      } catch (IOException e) {
        link.close();
        found.fail(e);
        return;
      }
      if (peer != uid) {
        link.close();
        found.fail("the process listening there runs as user " + peer + ", not as this process's user " + uid);
        return;
      }
      self[0] = new Successor(link, path);
      found.complete(self[0]);
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
      && ChannelSocket.pendingWriteBytes(channel) == 0;
  }

  /**
   * Sends {@code channel}'s descriptor to the successor, now or, when there is no room, a moment later; {@code done}
   * is told on the channel's event loop whether it went, and the caller closes the channel at once if it did.
   */
  void handOver(Channel channel, Consumer<Boolean> done) {
    if (!link.isActive() || !channel.isOpen()) {
      done.accept(false);
      return;
    }
    if (unacknowledged.incrementAndGet() > WINDOW) {
      unacknowledged.decrementAndGet();
      retry(channel, done);
      return;
    }
    int sent;
    try {
      sent = linkSocket.sendFd(((EpollSocketChannel) channel).fd().intValue());
    } catch (IOException e) {
      unacknowledged.decrementAndGet();
      if (failed.compareAndSet(false, true)) {
        log.warn("handover on {}: a connection could not be sent to the successor ({}); it and those that cannot "
          + "follow close as without handover", path, e.toString());
      }
      done.accept(false);
      return;
    }
    if (sent > 0) {
      done.accept(true);
    } else {
      // The link's send buffer is full.
      unacknowledged.decrementAndGet();
      retry(channel, done);
    }
  }

  private void retry(Channel channel, Consumer<Boolean> done) {
    channel.eventLoop().schedule(() -> handOver(channel, done), RETRY_MS, TimeUnit.MILLISECONDS);
  }

  /** On the link's event loop. */
  private void acknowledged(int count) {
    if (unacknowledged.addAndGet(-count) <= 0 && closing) {
      link.close();
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
      if (unacknowledged.get() <= 0) {
        link.close();
      }
    });
    long timer = vertx.setTimer(maxWaitMs, id -> link.close());
    return closed.future().onComplete(ar -> vertx.cancelTimer(timer));
  }
}
