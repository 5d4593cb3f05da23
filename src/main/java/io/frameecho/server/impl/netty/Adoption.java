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
 * The new process's side of a restart with handover: a unix socket on which a predecessor ({@link Successor}) sends
 * the file descriptors of its established connections. Each becomes an epoll socket channel and enters the server's
 * listening channel as a socket it had just accepted: Netty's acceptor registers it on an event loop, Vert.x hands it
 * to a server instance, and frame-echo admits it as any newcomer (limits, budget, meters). Only a peer running as this
 * process's user is heard. Each descriptor read is acknowledged with a byte: the predecessor sends a few at a time
 * ({@link Successor#WINDOW}). <b>Threading:</b> the unix socket's events, and each adoption, on the listener's event
 * loop.
 * <p>
 * The adopted sockets enter a Vert.x server of their own, the <em>entry</em>: listening on a loopback port nobody is
 * told of, with the frame server's options and connect handler, so that each adopted socket is a Vert.x socket with
 * the server's handler and options, and frame-echo's limits and meters (Vert.x's own TCP metrics count it under the
 * entry's address). Vert.x does not hand out a server's listening channel, and a socket
 * fired into a listener's pipeline is what Netty's own acceptor registers; so the entry's listener is learned the
 * public way, as the {@code parent()} of a socket it accepted: a connection to itself, which it closes (as it closes
 * any socket it accepted that was not adopted). The frame server's own listener cannot be learned so while the
 * predecessor listens on the same port ({@code SO_REUSEPORT}): the kernel may hand the connection to the predecessor.
 * The entry shuts down and closes with the frame server.
 */
public final class Adoption {

  private static final Logger log = LoggerFactory.getLogger("io.frameecho.server.FrameEchoServer");

  /** How long the entry may take to accept its own connection. */
  private static final long LEARN_WITHIN_MS = 10_000;
  /** Marks a channel fired into the entry's listener as adopted (anything else the entry accepts is closed). */
  private static final AttributeKey<Boolean> ADOPTED = AttributeKey.valueOf("frame-echo.adopted");

  /** The Vert.x server adopted sockets enter. */
  private final NetServer entry;
  private final AtomicInteger adopted = new AtomicInteger();
  /** The unix socket's listening channel, once bound. */
  private Channel unixListener;

  private Adoption(NetServer entry) {
    this.entry = entry;
  }

  /**
   * Listens at {@code bindPath} for a predecessor's descriptors, each of which reaches {@code connectHandler} as a socket
   * accepted by a server with {@code options} (on the caller's context); {@code uid} is the only user heard. Fails when
   * the entry is not an epoll TCP listener or the path cannot be bound.
   */
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
      // Bounded: a connection the entry never hands over fails the adoption rather than the server's listen.
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
    // The listener's own event loop: the descriptors read there enter the listener without a hop to another thread.
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

  /** The entry's loopback port, which nobody is told of. */
  int entryPort() {
    return entry.actualPort();
  }

  /** Vert.x's shutdown of the adopted sockets, as of the frame server's ({@code NetServer.shutdown}). */
  public Future<Void> shutdownAdopted(long timeoutMs) {
    return entry.shutdown(timeoutMs, TimeUnit.MILLISECONDS);
  }

  /** Closes the adopted sockets and the entry, as the frame server's {@code close}. */
  public Future<Void> closeAdopted() {
    return entry.close();
  }

  /** How many sockets were adopted so far. */
  public int adopted() {
    return adopted.get();
  }

  /** Stops hearing predecessors (Netty removes the file at the path it bound). */
  public Future<Void> close() {
    Promise<Void> closed = Promise.promise();
    unixListener.close().addListener(f -> closed.complete());
    return closed.future();
  }

  /** One predecessor's link: each descriptor read becomes an accepted socket of {@code listening}. */
  private static final class FromPredecessor extends ChannelInboundHandlerAdapter {

    private final Channel listening;
    private final int uid;
    private final AtomicInteger adopted;
    private int count;
    private int pid;
    /** Descriptors read and not acknowledged yet: a byte each, sent once the read is complete. */
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

    /** The descriptor as a socket just accepted by {@code listening}, or closed if it is not a connected TCP socket. */
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
        // Already closed.
      }
    }
  }
}
