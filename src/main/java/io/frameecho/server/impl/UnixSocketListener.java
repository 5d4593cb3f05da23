package io.frameecho.server.impl;

import io.frameecho.server.impl.shared.SocketPaths;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.SocketAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.ConnectException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * Listens on a unix socket path, and clears a stale socket file left there by a process that died.
 * <p>
 * Before the first bind on a path, what is there is looked at (on a worker thread): a socket file that refuses a
 * connection (nothing listens on it) is removed; a socket something accepts on, or anything that is not a socket (a
 * regular file, a directory, a symbolic link), is left alone and the listen fails saying so. It must be looked at
 * before: Netty's epoll transport unlinks whatever is at the path when it binds, a live socket or a regular file.
 * The other instances of a deployment wait for the same look ({@link SocketPaths}) and share the first one's
 * listener, as Vert.x shares it.
 */
final class UnixSocketListener {

  private static final Logger log = LoggerFactory.getLogger(FrameEchoServerImpl.LOGGER);
  /** {@code S_IFMT} and {@code S_IFSOCK} of {@code st_mode}. */
  private static final int FILE_TYPE_MASK = 0170000;
  private static final int SOCKET_TYPE = 0140000;

  enum Found { NOTHING, NOT_A_SOCKET, LISTENING, STALE }

  private UnixSocketListener() {
  }

  /**
   * {@code server} listening on {@code address}, a domain socket, once what was at its path is cleared; called on
   * {@code context}, the server's event loop, where the listen happens too. The path is claimed in {@link SocketPaths}:
   * the caller releases it when the server is done, or did not listen.
   */
  static Future<NetServer> listen(Vertx vertx, Context context, NetServer server, SocketAddress address) {
    Path path = Path.of(address.path());
    Promise<Void> cleared = Promise.promise();
    SocketPaths.claim(vertx, address.path(), () -> vertx.executeBlocking(() -> {
      clear(path);
      return null;
    })).onComplete(ar -> context.runOnContext(v -> cleared.handle(ar)));
    return cleared.future().compose(v -> server.listen(address));
  }

  /** Leaves nothing at {@code path} but what the bind may replace, or says why not; blocking. */
  private static void clear(Path path) throws IOException {
    switch (inspect(path)) {
      case NOT_A_SOCKET -> throw new IllegalStateException("unixSocket " + path
        + " exists and is not a socket: frame-echo removes only a stale socket file, not this");
      case LISTENING -> throw new IllegalStateException("unixSocket " + path + ": another process is listening on this socket");
      case STALE -> {
        Files.deleteIfExists(path);
        log.warn("removed the stale socket file {}: nothing listened on it (left by a process that did not shut down)", path);
      }
      case NOTHING -> {
      }
    }
  }

  /** What is at {@code path}; blocking (a file attribute read and a local connect), on a worker thread. */
  static Found inspect(Path path) throws IOException {
    if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
      return Found.NOTHING;
    }
    Object mode;
    try {
      mode = Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
    } catch (UnsupportedOperationException | IllegalArgumentException e) {
      return Found.NOT_A_SOCKET;
    }
    if (!(mode instanceof Integer m) || (m & FILE_TYPE_MASK) != SOCKET_TYPE) {
      return Found.NOT_A_SOCKET;
    }
    try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      // Non-blocking: a listener with a full backlog says "try again" instead of making this wait; it is there.
      probe.configureBlocking(false);
      probe.connect(UnixDomainSocketAddress.of(path));
      return Found.LISTENING;
    } catch (ConnectException refused) {
      return Found.STALE;
    }
  }
}
