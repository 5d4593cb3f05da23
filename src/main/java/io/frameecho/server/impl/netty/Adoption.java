package io.frameecho.server.impl.netty;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.channel.unix.DomainSocketReadMode;
import io.netty.channel.unix.FileDescriptor;
import io.netty.channel.unix.PeerCredentials;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import io.netty.util.AttributeKey;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The new process's side of a restart with handover: receives established connections' descriptors from a
 * {@link Successor} over a unix socket, from this process's user only, and fires each into a listener as a freshly
 * accepted socket, so it is admitted like any newcomer. Each descriptor is acknowledged with a byte, which paces the
 * sender's window. On the listener's event loop.
 * <p>
 * Vert.x does not expose a server's listening channel, so sockets enter a private loopback server (the entry) whose
 * listener is learned as the {@code parent()} of a connection to itself; the frame server's own listener cannot be
 * learned that way while the predecessor shares its port. See src/docs/upstream/vertx-netserver-listening-channel.md.
 */
public final class Adoption {

  private static final Logger log = LoggerFactory.getLogger("io.frameecho.server.FrameEchoServer");

  /** How long the entry may take to accept its own connection. */
  private static final long LEARN_WITHIN_MS = 10_000;
  /** Marks an adopted channel; anything else the entry accepts is closed. */
  private static final AttributeKey<Boolean> ADOPTED = AttributeKey.valueOf("frame-echo.adopted");

  private final NetServer entry;
  private final AtomicInteger adopted = new AtomicInteger();
  private Channel unixListener;

  private Adoption(NetServer entry) {
    this.entry = entry;
  }

  /** Listens at {@code bindPath} for user {@code uid}'s descriptors, each given to {@code connectHandler}. */
  public static Future<Adoption> listen(Vertx vertx, NetServerOptions options, int entryPort,
                                        Handler<NetSocket> connectHandler, String bindPath, int uid) {
    Promise<Channel> learned = Promise.promise();
    NetServer entry = vertx.createNetServer(new NetServerOptions(options).setHost("127.0.0.1").setPort(entryPort)
      .setReusePort(false)).connectHandler(socket -> {
        Channel channel = Sockets.channelOf(socket);
        if (channel.hasAttr(ADOPTED)) {
          connectHandler.handle(socket);
        } else {
          learned.tryComplete(channel.parent());
          channel.close();
        }
      });
    return entry.listen().compose(bound -> {
      NetClient self = vertx.createNetClient();
      // Bounded, so a lost self-connection fails the adoption rather than hanging the server's listen.
      long timer = vertx.setTimer(LEARN_WITHIN_MS, t -> learned.tryFail("the entry did not accept its own connection within "
        + LEARN_WITHIN_MS + " ms"));
      return self.connect(bound.actualPort(), "127.0.0.1")
        .compose(probe -> learned.future())
        .eventually(() -> {
          vertx.cancelTimer(timer);
          return self.close();
        });
    }).compose(listening -> bind(new Adoption(entry), listening, bindPath, uid))
      .onFailure(e -> entry.close());
  }

  private static Future<Adoption> bind(Adoption adoption, Channel listening, String bindPath, int uid) {
    if (!(listening instanceof io.netty.channel.epoll.EpollServerSocketChannel)) {
      return Future.failedFuture(new IllegalStateException("the listener is not an epoll TCP listener: "
        + (listening == null ? "none" : listening.getClass().getSimpleName())));
    }
    Promise<Adoption> bound = Promise.promise();
    // Same loop as the listener, so adopted descriptors need no thread hop.
    ChannelFuture bind = new ServerBootstrap()
      .group(listening.eventLoop(), listening.eventLoop())
      .channel(EpollServerDomainSocketChannel.class)
      .childOption(EpollChannelOption.DOMAIN_SOCKET_READ_MODE, DomainSocketReadMode.FILE_DESCRIPTORS)
      .childHandler(new ChannelInitializer<EpollDomainSocketChannel>() {
        @Override
        protected void initChannel(EpollDomainSocketChannel predecessor) {
          predecessor.pipeline().addLast(new FromPredecessor(listening, uid, adoption.adopted));
        }
      })
      .bind(new DomainSocketAddress(bindPath));
    bind.addListener(done -> {
      if (done.isSuccess()) {
        adoption.unixListener = bind.channel();
        bound.complete(adoption);
      } else {
        bound.fail(done.cause());
      }
    });
    return bound.future();
  }

  /** The entry's private loopback port. */
  int entryPort() {
    return entry.actualPort();
  }

  /** Shuts down the adopted sockets, as the frame server's shutdown does. */
  public Future<Void> shutdownAdopted(long timeoutMs) {
    return entry.shutdown(timeoutMs, TimeUnit.MILLISECONDS);
  }

  /** Closes the adopted sockets and the entry. */
  public Future<Void> closeAdopted() {
    return entry.close();
  }

  /** Sockets adopted so far. */
  public int adopted() {
    return adopted.get();
  }

  /** Stops listening for predecessors. */
  public Future<Void> close() {
    Promise<Void> closed = Promise.promise();
    unixListener.close().addListener(f -> closed.complete());
    return closed.future();
  }

  /** One predecessor's link. */
  private static final class FromPredecessor extends ChannelInboundHandlerAdapter {

    private final Channel listening;
    private final int uid;
    private final AtomicInteger adopted;
    private int count;
    private int pid;
    /** Descriptors to acknowledge when the read completes. */
    private int toAcknowledge;

    FromPredecessor(Channel listening, int uid, AtomicInteger adopted) {
      this.listening = listening;
      this.uid = uid;
      this.adopted = adopted;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
      PeerCredentials peer;
      try {
        peer = ((EpollDomainSocketChannel) ctx.channel()).peerCredentials();
      } catch (IOException e) {
        log.warn("handover: a process connected and its credentials could not be read ({}); not heard", e.toString());
        ctx.close();
        return;
      }
      if (peer.uid() != uid) {
        log.warn("handover: process {} of user {} connected; only user {}'s processes hand over connections: not heard",
          peer.pid(), peer.uid(), uid);
        ctx.close();
        return;
      }
      pid = peer.pid();
      log.info("handover: process {} is handing over its connections", pid);
      super.channelActive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof FileDescriptor fd) {
        count++;
        toAcknowledge++;
        adopt(fd);
      } else {
        ReferenceCountUtil.release(msg);
      }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
      if (toAcknowledge > 0) {
        ctx.writeAndFlush(Unpooled.wrappedBuffer(new byte[toAcknowledge]));
        toAcknowledge = 0;
      }
      super.channelReadComplete(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
      if (pid != 0) {
        log.info("handover: adopted {} connection(s) from process {}", count, pid);
      }
      super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      log.warn("handover: the link from process {} failed: {}", pid, cause.toString());
      ctx.close();
    }

    /** Fires the descriptor into {@code listening} as accepted, or closes it if not a connected TCP socket. */
    private void adopt(FileDescriptor fd) {
      EpollSocketChannel socket;
      try {
        socket = new EpollSocketChannel(fd.intValue());
      } catch (RuntimeException e) {
        closeQuietly(fd);
        return;
      }
      if (!socket.isActive() || !(socket.remoteAddress() instanceof InetSocketAddress)) {
        closeQuietly(fd);
        return;
      }
      adopted.incrementAndGet();
      listening.eventLoop().execute(() -> {
        if (!listening.isActive()) {
          closeQuietly(fd);
          return;
        }
        socket.attr(ADOPTED).set(Boolean.TRUE);
        listening.pipeline().fireChannelRead(socket);
      });
    }

    private static void closeQuietly(FileDescriptor fd) {
      try {
        fd.close();
      } catch (IOException ignored) {
      }
    }
  }
}
