package io.frameecho.server.impl.netty;

import io.frameecho.server.FrameEchoOptions;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.channel.unix.DomainSocketReadMode;
import io.netty.channel.unix.FileDescriptor;
import io.netty.channel.unix.PeerCredentials;
import io.netty.channel.unix.Socket;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import io.vertx.core.shareddata.LocalMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A restart with handover ({@code handoverSocket}): a server adopts, at that unix socket path, the established
 * connections a predecessor sends it (their descriptors, SCM_RIGHTS, from this process's user only), and at shutdown
 * sends its own to the {@link Successor} listening there, when one does. Only on epoll, for plain TCP without the PROXY
 * protocol: elsewhere start-up says why in one line and shutdown drains as without it.
 * <p>
 * The path is always the newest process's: each binds a socket of its own next to it and renames it onto the path
 * (atomically, replacing its predecessor's), so a process that stops and finds at the path a socket that is not its
 * own has a successor. Its own sockets are remembered in its Vert.x instance (an inode each), so it never hands over
 * to itself.
 * <p>
 * Vert.x cannot hand a server a socket it did not accept, nor show its listening channel, so adopted sockets are fired,
 * as accepted, into the listener of a private loopback server (the entry) of the frame server's options, learned as
 * the {@code parent()} of a connection to itself; the frame server's own listener cannot be learned that way while the
 * predecessor shares its port. See src/docs/upstream/vertx-netserver-listening-channel.md. Each descriptor adopted is
 * acknowledged with a byte, which paces the sender's window. On the server's event loop; the file work on a worker.
 */
public final class Handover {

  private static final Logger log = LoggerFactory.getLogger("io.frameecho.server.FrameEchoServer");
  /** The inodes of the sockets this Vert.x instance's servers bound at their handover paths. */
  private static final String OWN_SOCKETS = "frame-echo.handover-sockets";
  private static final AtomicInteger BINDS = new AtomicInteger();
  /** {@code S_IFMT} and {@code S_IFSOCK} of {@code st_mode}. */
  private static final int FILE_TYPE_MASK = 0170000;
  private static final int SOCKET_TYPE = 0140000;
  /** How long shutdown waits, once its connections are gone, for the successor to say it holds them all. */
  private static final long ACKNOWLEDGED_WITHIN_MS = 5_000;
  /** How long the entry may take to accept its own connection. */
  private static final long LEARN_WITHIN_MS = 10_000;
  /** Marks an adopted channel; anything else the entry accepts is closed. */
  private static final AttributeKey<Boolean> ADOPTED = AttributeKey.valueOf("frame-echo.adopted");

  private final Vertx vertx;
  /** The server's event loop, where the link to a successor runs. */
  private final Context context;
  private final String path;
  /** The loopback server adopted sockets enter, or null. */
  private NetServer entry;
  /** Where predecessors connect, a unix socket listener on the entry's event loop, or null. */
  private Channel fromPredecessors;
  private final AtomicInteger adopted = new AtomicInteger();
  private Object ownInode;
  private volatile Successor successor;

  Handover(Vertx vertx, Context context, String path) {
    this.vertx = vertx;
    this.context = context;
    this.path = path;
  }

  /**
   * The handover {@code options} ask for, or null: none asked for ({@code handoverSocket} empty), or one that cannot
   * be done here, which start-up's line then says.
   */
  public static Handover ifAskedFor(Vertx vertx, Context context, FrameEchoOptions options, boolean tls,
                                    boolean proxyProtocol) {
    String path = options.getHandoverSocket();
    if (path.isEmpty()) {
      return null;
    }
    String transport = Internals.transportName(vertx);
    String whyNot = !"epoll".equals(transport) ? "the " + transport + " transport cannot adopt a socket's descriptor (epoll can)"
      : tls ? "a TLS session's keys cannot move to another process"
      : proxyProtocol ? "a successor would wait for a PROXY protocol header its predecessor already read"
      : options.unixSocketAddress() != null ? "the server listens on a unix socket, and only TCP connections move"
      : null;
    if (whyNot != null) {
      log.warn("handoverSocket {}: connections are not handed over, {}; shutdown drains them", path, whyNot);
      return null;
    }
    return new Handover(vertx, context, path);
  }

  /**
   * Binds the server with handover: the path checked (its directory must exist, and only a socket may be there), then
   * {@code bind} (the server's port), then a predecessor's connections adopted, each reaching {@code adopted} as a
   * socket accepted with {@code options} on the loopback {@code entryPort} (0: a port of its own; a deployment's
   * instances share one). Where adopting cannot be set up, the server runs without it, and says why.
   */
  public Future<NetServer> bind(Supplier<Future<NetServer>> bind, NetServerOptions options, Handler<NetSocket> adopted,
                                int entryPort) {
    Path own = Path.of(path + "." + ProcessHandle.current().pid() + "-" + BINDS.incrementAndGet());
    Future<Void> checked = vertx.executeBlocking(() -> {
      Path dir = Path.of(path).toAbsolutePath().getParent();
      String wrong = dir == null || !Files.isDirectory(dir) ? "handoverSocket " + path + ": its directory does not exist"
        : notASocket(Path.of(path));
      if (wrong != null) {
        throw new IllegalArgumentException("invalid frame-echo configuration: " + wrong);
      }
      return null;
    });
    return checked.compose(v -> bind.get()).compose(server -> vertx.executeBlocking(() -> {
      Files.deleteIfExists(own);
      return uid();
    }).compose(uid -> adopt(options, entryPort, adopted, own.toString(), uid))
      .compose(v -> vertx.executeBlocking(() -> {
        Files.move(own, Path.of(path), StandardCopyOption.ATOMIC_MOVE);
        return Files.getAttribute(Path.of(path), "unix:ino", LinkOption.NOFOLLOW_LINKS);
      })).map(inode -> {
        ownInode = inode;
        ownSockets().put(String.valueOf(inode), Boolean.TRUE);
        log.info("handover on {}: a successor started with the same handoverSocket takes this server's connections "
          + "at shutdown; a predecessor's are adopted here", path);
        return server;
      }).recover(e -> {
        log.warn("handoverSocket {}: this server adopts no predecessor's connections: {}", path, e.getMessage());
        closeAdoption();
        return Future.succeededFuture(server);
      }));
  }

  /**
   * Starts the entry, learns its listener, and listens at {@code bindPath} for user {@code uid}'s descriptors, each
   * given to {@code adoptedHandler}; fails, having closed what it opened, when one of those cannot be done.
   */
  Future<Void> adopt(NetServerOptions options, int entryPort, Handler<NetSocket> adoptedHandler, String bindPath, int uid) {
    Promise<Channel> learned = Promise.promise();
    entry = vertx.createNetServer(new NetServerOptions(options).setHost("127.0.0.1").setPort(entryPort)
      .setReusePort(false)).connectHandler(socket -> {
        Channel channel = Sockets.channelOf(socket);
        if (channel.hasAttr(ADOPTED)) {
          adoptedHandler.handle(socket);
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
      return self.connect(bound.actualPort(), "127.0.0.1").compose(probe -> learned.future()).eventually(() -> {
        vertx.cancelTimer(timer);
        return self.close();
      });
    }).compose(listening -> {
      if (!(listening instanceof EpollServerSocketChannel)) {
        return Future.failedFuture(new IllegalStateException("the listener is not an epoll TCP listener: "
          + (listening == null ? "none" : listening.getClass().getSimpleName())));
      }
      // Same loop as the entry's listener, so adopted descriptors need no thread hop.
      ChannelFuture bind = new ServerBootstrap().group(listening.eventLoop(), listening.eventLoop())
        .channel(EpollServerDomainSocketChannel.class)
        .childOption(EpollChannelOption.DOMAIN_SOCKET_READ_MODE, DomainSocketReadMode.FILE_DESCRIPTORS)
        .childHandler(new ChannelInitializer<EpollDomainSocketChannel>() {
          @Override
          protected void initChannel(EpollDomainSocketChannel predecessor) {
            predecessor.pipeline().addLast(new FromPredecessor(listening, uid));
          }
        }).bind(new DomainSocketAddress(bindPath));
      fromPredecessors = bind.channel();
      return done(bind);
    }).onFailure(e -> closeAdoption());
  }

  /** Vert.x's shutdown of the adopted connections, beside the frame server's own. */
  public Future<Void> shutdownAdopted(long timeoutMs) {
    return entry == null ? Future.succeededFuture() : entry.shutdown(timeoutMs, TimeUnit.MILLISECONDS);
  }

  /**
   * Shutdown's first step: stops adopting, then looks for a successor at the path; completes either way (the
   * connections then drain as without handover).
   */
  public Future<Void> findSuccessor() {
    return stopAdopting().compose(v -> vertx.executeBlocking(() -> {
      Path target = Path.of(path);
      if (!Files.exists(target, LinkOption.NOFOLLOW_LINKS) || notASocket(target) != null) {
        return -1;
      }
      Object inode = Files.getAttribute(target, "unix:ino", LinkOption.NOFOLLOW_LINKS);
      if (ownSockets().containsKey(String.valueOf(inode))) {
        if (inode.equals(ownInode)) {
          // Nobody took the path over: this server's own socket file, closed now, is removed.
          Files.deleteIfExists(target);
        }
        return -1;
      }
      return uid();
    })).compose(uid -> uid >= 0 ? Successor.connect(context, path, uid).map(found -> {
      successor = found;
      log.info("handover on {}: a successor listens there; connections that owe nothing move to it", path);
      return (Void) null;
    }) : Future.<Void>failedFuture("no successor listens there"))
      .recover(e -> {
        log.info("handover on {}: no successor ({}); connections drain", path, e.getMessage());
        return Future.succeededFuture();
      });
  }

  /** The successor found at shutdown, or null. */
  public Successor successor() {
    return successor;
  }

  /** For the shutdown line, before the drain's counts. */
  public String summary(long handedOver) {
    return successor == null ? "" : handedOver + " handed over to the successor on " + path + ", ";
  }

  /**
   * The server is done: the adopted connections close, and the link to the successor ends once the successor holds
   * every connection sent (at most {@link #ACKNOWLEDGED_WITHIN_MS} later), so that an application that closes Vert.x
   * then does not close one the successor has not read yet.
   */
  public Future<Void> finished() {
    Future<Void> linkClosed = successor == null ? Future.succeededFuture() : successor.close(vertx, ACKNOWLEDGED_WITHIN_MS);
    if (ownInode != null) {
      ownSockets().remove(String.valueOf(ownInode));
    }
    return Future.all(linkClosed, closeAdoption()).mapEmpty();
  }

  /** Stops listening for predecessors. */
  Future<Void> stopAdopting() {
    Promise<Void> closed = Promise.promise();
    if (fromPredecessors == null) {
      closed.complete();
    } else {
      fromPredecessors.close().addListener(f -> closed.complete());
    }
    return closed.future();
  }

  /** Stops adopting and closes the entry with the adopted sockets. */
  private Future<Void> closeAdoption() {
    Future<Void> closed = Future.all(stopAdopting(), entry == null ? Future.succeededFuture() : entry.close()).mapEmpty();
    fromPredecessors = null;
    entry = null;
    return closed;
  }

  /** The entry's private loopback port. */
  int entryPort() {
    return entry.actualPort();
  }

  /** Sockets adopted so far. */
  int adopted() {
    return adopted.get();
  }

  /** {@code future} as a Vert.x future. */
  private static Future<Void> done(ChannelFuture future) {
    Promise<Void> done = Promise.promise();
    future.addListener(f -> {
      if (f.isSuccess()) {
        done.complete();
      } else {
        done.fail(f.cause());
      }
    });
    return done.future();
  }

  /** This process's user; blocking (a file attribute read). */
  private static int uid() throws IOException {
    return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
  }

  private LocalMap<String, Boolean> ownSockets() {
    return vertx.sharedData().getLocalMap(OWN_SOCKETS);
  }

  /** Why {@code path} cannot be a handover socket, or null (a socket, or nothing). Blocking. */
  private static String notASocket(Path path) throws IOException {
    if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
      return null;
    }
    Object mode = Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
    return mode instanceof Integer m && (m & FILE_TYPE_MASK) == SOCKET_TYPE ? null
      : "handoverSocket " + path + " exists and is not a socket: frame-echo replaces only a socket there";
  }

  /** Whether {@code channel} can move; a TLS socket cannot, since its keys stay in this process. */
  static boolean movable(Channel channel) {
    return channel instanceof EpollSocketChannel socket && socket.isActive() && !socket.isOutputShutdown()
      && !socket.isInputShutdown() && channel.pipeline().get(SslHandler.class) == null
      && ChannelSocket.pendingWriteBytes(channel) == 0;
  }

  /** One predecessor's link: each descriptor it sends is fired into the entry's {@code listening} channel. */
  private final class FromPredecessor extends ChannelInboundHandlerAdapter {

    private final Channel listening;
    private final int uid;
    private int count;
    private int pid;
    /** Descriptors to acknowledge when the read completes. */
    private int toAcknowledge;

    FromPredecessor(Channel listening, int uid) {
      this.listening = listening;
      this.uid = uid;
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

  /**
   * The link to the successor: sends established sockets' descriptors to it. Each descriptor is sent and closed in one
   * task of its socket's event loop, directly on the link's socket, so its number cannot be reused before it is sent;
   * closing it afterwards sends nothing to the client. At most {@link #WINDOW} descriptors are unacknowledged, and a
   * full window or send buffer means a retry, because Netty's epoll domain socket shuts the link down on a write to a
   * full buffer. {@link #handOver} runs on the socket's event loop; acknowledgements on the link's.
   */
  public static final class Successor extends ChannelInboundHandlerAdapter {

    /** Most descriptors sent and not yet acknowledged. */
    static final int WINDOW = 64;
    /** Delay before retrying a hand-over that found no room. */
    private static final long RETRY_MS = 1;

    private final String path;
    private final AtomicInteger unacknowledged = new AtomicInteger();
    /** Only the first send failure is logged. */
    private final AtomicBoolean failed = new AtomicBoolean();
    /** Completed once the link has closed. */
    private final Promise<Void> closed = Promise.promise();
    /** Set once connected, before anything is sent. */
    private Channel link;
    private Socket linkSocket;
    private volatile boolean closing;

    private Successor(String path) {
      this.path = path;
    }

    /** Connects to the successor at {@code path}; fails when none listens or it runs as a user other than {@code uid}. */
    static Future<Successor> connect(Context context, String path, int uid) {
      Successor successor = new Successor(path);
      // On the server's own event loop, so the link starts nothing else.
      ChannelFuture connect = new Bootstrap().group(((ContextInternal) context).nettyEventLoop())
        .channel(EpollDomainSocketChannel.class).handler(successor).connect(new DomainSocketAddress(path));
      return done(connect).compose(v -> {
        EpollDomainSocketChannel link = (EpollDomainSocketChannel) connect.channel();
        try {
          int peer = link.peerCredentials().uid();
          if (peer != uid) {
            link.close();
            return Future.failedFuture("the process listening there runs as user " + peer + ", not as this process's user " + uid);
          }
        } catch (IOException e) {
          link.close();
          return Future.failedFuture(e);
        }
        successor.linkSocket = (Socket) link.fd();
        successor.link = link;
        return Future.succeededFuture(successor);
      });
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

    /** The successor's acknowledgements, on the link's event loop. */
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof ByteBuf acks && unacknowledged.addAndGet(-acks.readableBytes()) <= 0 && closing) {
        ctx.close();
      }
      ReferenceCountUtil.release(msg);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
      closed.tryComplete();
      super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }

    /**
     * Closes the link once every sent descriptor is acknowledged, since closing it earlier would drop unread descriptors
     * and their connections; at the latest after {@code maxWaitMs}.
     */
    Future<Void> close(Vertx vertx, long maxWaitMs) {
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
}
