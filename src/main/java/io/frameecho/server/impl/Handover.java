package io.frameecho.server.impl;

import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.impl.netty.Adoption;
import io.frameecho.server.impl.netty.Internals;
import io.frameecho.server.impl.netty.Successor;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.Handler;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import io.vertx.core.shareddata.LocalMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A restart with handover ({@code handoverSocket}): a server adopts, at that unix socket path, the connections a
 * predecessor hands it, and at shutdown hands its own to the successor listening there, when one does.
 * <p>
 * The path is always the newest process's: each binds a socket of its own next to it and renames it onto the path
 * (atomically, replacing its predecessor's), so a process that stops and finds at the path a socket that is not its
 * own has a successor. Its own sockets are remembered in its Vert.x instance (an inode each), so it never hands over
 * to itself. Only on epoll, for plain TCP without the PROXY protocol: elsewhere start-up says why in one line and
 * shutdown drains as without it. On the server's event loop; the file work on a worker thread.
 */
final class Handover {

  private static final Logger log = LoggerFactory.getLogger(FrameEchoServerImpl.LOGGER);
  /** The inodes of the sockets this Vert.x instance's servers bound at their handover paths. */
  private static final String OWN_SOCKETS = "frame-echo.handover-sockets";
  private static final AtomicInteger BINDS = new AtomicInteger();
  /** {@code S_IFMT} and {@code S_IFSOCK} of {@code st_mode}. */
  private static final int FILE_TYPE_MASK = 0170000;
  private static final int SOCKET_TYPE = 0140000;

  /** How long shutdown waits, once its connections are gone, for the successor to say it holds them all. */
  static final long ACKNOWLEDGED_WITHIN_MS = 5_000;

  private final Vertx vertx;
  /** The server's event loop, where the link to a successor runs. */
  private final Context context;
  private final String path;
  private Adoption adoption;
  private Object ownInode;
  private volatile Successor successor;

  private Handover(Vertx vertx, Context context, String path) {
    this.vertx = vertx;
    this.context = context;
    this.path = path;
  }

  /**
   * The handover {@code options} ask for, or null: none asked for ({@code handoverSocket} empty), or one that cannot
   * be done here, which start-up's line then says.
   */
  static Handover ifAskedFor(Vertx vertx, Context context, FrameEchoOptions options, boolean tls, boolean proxyProtocol) {
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
   * Binds the server with handover: the path checked ({@link #checkPath}), then {@code bind} (the server's port), then
   * a predecessor's connections adopted ({@link #adoptInto}), each reaching {@code adopted} as a socket accepted with
   * {@code options} on the loopback {@code entryPort} (0: a port of its own; a deployment's instances share one).
   */
  Future<NetServer> bind(Supplier<Future<NetServer>> bind, NetServerOptions options, Handler<NetSocket> adopted,
                         int entryPort) {
    return checkPath().compose(v -> bind.get()).compose(server -> adoptInto(options, adopted, entryPort).map(server));
  }

  /**
   * Fails, naming {@code handoverSocket}, when the path cannot be this server's: its directory missing, or something
   * other than a socket there. Before the server binds its port.
   */
  private Future<Void> checkPath() {
    return vertx.executeBlocking(() -> {
      Path target = Path.of(path).toAbsolutePath();
      Path dir = target.getParent();
      String wrong = dir == null || !Files.isDirectory(dir) ? "handoverSocket " + path + ": its directory does not exist"
        : notASocket(target);
      if (wrong != null) {
        throw new IllegalArgumentException("invalid frame-echo configuration: " + wrong);
      }
      return null;
    });
  }

  /**
   * Listens at the path for a predecessor's connections, which reach {@code adopted}. Where that fails, the server runs
   * without adopting, and says why.
   */
  private Future<Void> adoptInto(NetServerOptions options, Handler<NetSocket> adopted, int entryPort) {
    Path target = Path.of(path);
    Path own = Path.of(path + "." + ProcessHandle.current().pid() + "-" + BINDS.incrementAndGet());
    return vertx.executeBlocking(() -> {
      Files.deleteIfExists(own);
      return uid();
    }).compose(uid -> Adoption.listen(vertx, options, entryPort, adopted, own.toString(), uid))
      .compose(adopting -> {
        adoption = adopting;
        return vertx.executeBlocking(() -> {
          Files.move(own, target, StandardCopyOption.ATOMIC_MOVE);
          return Files.getAttribute(target, "unix:ino", LinkOption.NOFOLLOW_LINKS);
        });
      }).map(inode -> {
        ownInode = inode;
        ownSockets().put(String.valueOf(inode), Boolean.TRUE);
        log.info("handover on {}: a successor started with the same handoverSocket takes this server's connections "
          + "at shutdown; a predecessor's are adopted here", path);
        return (Void) null;
      }).recover(e -> {
        log.warn("handoverSocket {}: this server adopts no predecessor's connections: {}", path, e.getMessage());
        if (adoption != null) {
          adoption.close();
          adoption.closeAdopted();
          adoption = null;
        }
        return Future.succeededFuture();
      });
  }

  /** Vert.x's shutdown of the adopted connections, beside the frame server's own. */
  Future<Void> shutdownAdopted(long timeoutMs) {
    return adoption == null ? Future.succeededFuture() : adoption.shutdownAdopted(timeoutMs);
  }

  /**
   * Shutdown's first step with handover: completes once {@code stoppedAccepting} has and the successor is found (or
   * known to be absent), before Vert.x tells the connections, so that each close can hand its socket over.
   */
  Future<Void> successorFoundWhen(Future<Void> stoppedAccepting) {
    return Future.all(stoppedAccepting, findSuccessor()).mapEmpty();
  }

  /**
   * Shutdown's end with handover: completes once {@code ended} has and the successor holds every connection handed
   * over ({@link #finished}): an application that closes Vert.x then does not close one the successor has not read yet.
   */
  Future<Void> finishedWhen(Future<?> ended) {
    return ended.compose(v -> finished());
  }

  /**
   * Stops adopting, then looks for a successor at the path; completes either way (the connections then drain as
   * without handover).
   */
  private Future<Void> findSuccessor() {
    Future<Void> stopped = adoption == null ? Future.succeededFuture() : adoption.close();
    return stopped.compose(v -> vertx.executeBlocking(() -> {
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
  Successor successor() {
    return successor;
  }

  /** For the shutdown line, before the drain's counts. */
  String summary(long handedOver) {
    return successor == null ? "" : handedOver + " handed over to the successor on " + path + ", ";
  }

  /**
   * The server is done: the link to the successor ends once the successor holds every connection sent (at most
   * {@link #ACKNOWLEDGED_WITHIN_MS} later), or the adoption ends.
   */
  Future<Void> finished() {
    Future<Void> linkClosed = successor == null ? Future.succeededFuture() : successor.close(vertx, ACKNOWLEDGED_WITHIN_MS);
    if (adoption != null) {
      adoption.close();
      linkClosed = Future.all(linkClosed, adoption.closeAdopted()).mapEmpty();
      adoption = null;
    }
    if (ownInode != null) {
      ownSockets().remove(String.valueOf(ownInode));
    }
    return linkClosed;
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
}
