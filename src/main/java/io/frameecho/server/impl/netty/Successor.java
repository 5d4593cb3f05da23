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
 * The old process's side of a restart with handover: sends established sockets' descriptors (SCM_RIGHTS) to the
 * successor's {@link Adoption}, from this process's user only. Each descriptor is sent and closed in one task of its
 * socket's event loop, directly on the link's socket, so its number cannot be reused before it is sent; closing it
 * afterwards sends nothing to the client. At most {@link #WINDOW} descriptors are unacknowledged, and a full window or
 * send buffer means a retry, because Netty's epoll domain socket shuts the link down on a write to a full buffer.
 * {@link #handOver} runs on the socket's event loop; acknowledgements on the link's.
 */
public final class Successor {

  private static final Logger log = LoggerFactory.getLogger("io.frameecho.server.FrameEchoServer");
  /** Most descriptors sent and not yet acknowledged. */
  static final int WINDOW = 64;
  /** Delay before retrying a hand-over that found no room. */
  private static final long RETRY_MS = 1;

  private final Channel link;
  private final Socket linkSocket;
  private final String path;
  private final AtomicInteger unacknowledged = new AtomicInteger();
  /** Only the first send failure is logged. */
  private final AtomicBoolean failed = new AtomicBoolean();
  /** Completed once the link has closed. */
  private final Promise<Void> closed = Promise.promise();
  private volatile boolean closing;

  private Successor(Channel link, String path) {
    this.link = link;
    this.linkSocket = (Socket) ((EpollDomainSocketChannel) link).fd();
    this.path = path;
  }

  /** Connects to the successor at {@code path}; fails when none listens or it runs as a user other than {@code uid}. */
  public static Future<Successor> connect(Context context, String path, int uid) {
    Promise<Successor> found = Promise.promise();
    Successor[] self = new Successor[1];
    // On the server's own event loop, so the link starts nothing else.
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

  /** Whether {@code channel} can move; a TLS socket cannot, since its keys stay in this process. */
  static boolean movable(Channel channel) {
    return channel instanceof EpollSocketChannel socket && socket.isActive() && !socket.isOutputShutdown()
      && !socket.isInputShutdown() && channel.pipeline().get(SslHandler.class) == null
      && ChannelSocket.pendingWriteBytes(channel) == 0;
  }

  /** Sends {@code channel}'s descriptor, retrying while there is no room; {@code done} learns whether it went. */
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
   * Closes the link once every sent descriptor is acknowledged, since closing it earlier would drop unread descriptors
   * and their connections; at the latest after {@code maxWaitMs}.
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
