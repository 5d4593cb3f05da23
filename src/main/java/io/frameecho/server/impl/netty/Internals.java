package io.frameecho.server.impl.netty;

import io.netty.handler.codec.haproxy.HAProxyMessageDecoder;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;

/** What start-up says of the Vert.x and Netty it runs on. Any thread. */
public final class Internals {

  private Internals() {
  }

  /** The running Vert.x version. */
  public static String vertxVersion() {
    return VertxInternal.version();
  }

  /** Why the {@link EpollProbe} workaround is off, or null. */
  public static String whatIsOff() {
    return EpollProbe.FOUND.off();
  }

  /** Whether netty-codec-haproxy, needed by {@link ProxyProtocol}, is on the class path. */
  public static boolean proxyCodecPresent() {
    try {
      return HAProxyMessageDecoder.class != null;
    } catch (LinkageError e) {
      return false;
    }
  }

  /** The transport {@code vertx} runs on, such as nio or epoll. */
  public static String transportName(Vertx vertx) {
    return Sockets.transportName(vertx);
  }
}
