package io.frameecho.server.impl.netty;

import io.netty.handler.codec.haproxy.HAProxyMessageDecoder;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;

/** What start-up says of the Vert.x and Netty it runs on. Any thread. */
public final class Internals {

  private Internals() {
  }

  /** The Vert.x version running, as its jar says it. */
  public static String vertxVersion() {
    return VertxInternal.version();
  }

  /** Why the epoll interest-set workaround ({@link EpollProbe}) is off on this Netty, or null. */
  public static String whatIsOff() {
    return EpollProbe.FOUND.off();
  }

  /** Whether {@code io.netty:netty-codec-haproxy}, which {@link ProxyHeader} needs, is on the class path. */
  public static boolean proxyCodecPresent() {
    try {
      return HAProxyMessageDecoder.class != null;
    } catch (LinkageError e) {
      return false;
    }
  }

  /** The transport {@code vertx} runs on: nio, epoll, io_uring (or kqueue). */
  public static String transportName(Vertx vertx) {
    return Sockets.transportName(vertx);
  }
}
