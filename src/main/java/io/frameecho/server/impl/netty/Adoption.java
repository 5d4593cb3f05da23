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
import io.vertx.core.internal.CloseableResource;
import io.vertx.core.net.NetServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.reflect.Field;
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
 * The listening channel is reached through Vert.x's server: its {@code bindFuture}, held by the server that bound the
 * port ({@code actualServer} in 5.1) or by the resource a port's servers share ({@code resource} in 5.2). This is
 * frame-echo's one reach past what Vert.x exports (private fields, {@code setAccessible}): Vert.x has no way to hand
 * a server a socket it did not accept, and a new process has accepted nothing yet whose {@code parent()} it could
 * read. The request for an API that replaces it is src/docs/upstream/vertx-netserver-listening-channel.md; {@code
 * AdoptionTest} fails the day the lookup breaks.
 */
public final class Adoption {

  private static final Logger log = LoggerFactory.getLogger("io.frameecho.server.FrameEchoServer");

  private final Listener listener;
  private final AtomicInteger adopted = new AtomicInteger();
  /** The unix socket's listening channel, once bound. */
  private Channel unixListener;

  private Adoption(Listener listener) {
    this.listener = listener;
  }

  /**
   * Listens at {@code bindPath} for a predecessor's descriptors, which enter {@code server}'s listening channel;
   * {@code uid} is the only user heard. Fails when the listening channel cannot be found or the path cannot be bound.
   */
  public static Future<Adoption> listen(NetServer server, String bindPath, int uid) {
    Channel listening;
    try {
      listening = listeningChannel(server);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return Future.failedFuture(new IllegalStateException("the listening channel of Vert.x's server was not found: " + e, e));
    }
    if (!(listening instanceof io.netty.channel.epoll.EpollServerSocketChannel)) {
      return Future.failedFuture(new IllegalStateException("the listener is not an epoll TCP listener: "
        + (listening == null ? "none" : listening.getClass().getSimpleName())));
    }
    Adoption adoption = new Adoption(new Listener(listening));
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

  /** The server's listening channel, as {@link Listener}. */
  public Listener listener() {
    return listener;
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

  /** The channel listening for {@code server}: through the fields named in the class comment. */
  static Channel listeningChannel(NetServer server) throws ReflectiveOperationException {
    Object bound = server;
    Field actual = findField(bound.getClass(), "actualServer");
    if (actual != null) {
      Object value = actual.get(bound);
      bound = value == null ? bound : value;
    }
    Field resource = findField(bound.getClass(), "resource");
    if (resource != null) {
      Object shared = resource.get(bound);
      bound = ((CloseableResource<?>) shared).get();
    }
    Field bindFuture = findField(bound.getClass(), "bindFuture");
    if (bindFuture == null) {
      throw new NoSuchFieldException(bound.getClass().getName() + ".bindFuture");
    }
    return (Channel) ((Future<?>) bindFuture.get(bound)).result();
  }

  private static Field findField(Class<?> type, String name) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      try {
        Field field = c.getDeclaredField(name);
        field.setAccessible(true);
        return field;
      } catch (NoSuchFieldException ignored) {
        // Up the hierarchy.
      }
    }
    return null;
  }
}
