package io.frameecho.server.impl.netty;

import io.vertx.core.Vertx;

import java.util.ArrayList;
import java.util.List;

/** What start-up says of the internals this package reaches: what is used, and what is off and why. Any thread. */
public final class Internals {

  private Internals() {
  }

  /** The Vert.x version running, as its jar says it. */
  public static String vertxVersion() {
    return VertxLine.vertxVersion();
  }

  /** One line: the Vert.x version, how reads reach a connection on it, and what epoll channels change. */
  public static String description() {
    return VertxLine.FOUND.description() + EpollProbe.FOUND.description();
  }

  /** One line naming every internal that was not found, what that turns off and why; null when all were found. */
  public static String whatIsOff() {
    return whatIsOff(VertxLine.FOUND, EpollProbe.FOUND, ClusterView.OFF, LoopAcceptor.off());
  }

  static String whatIsOff(VertxLine line, EpollProbe epoll, String clusterViewOff, String loopAcceptorOff) {
    List<String> off = new ArrayList<>();
    if (line.off() != null) {
      off.add(line.off());
    }
    if (loopAcceptorOff != null) {
      off.add(loopAcceptorOff);
    }
    if (clusterViewOff != null) {
      off.add(clusterViewOff);
    }
    off.addAll(epoll.off().stream().map(item -> "on epoll, " + item).toList());
    return off.isEmpty() ? null : "frame-echo runs without some of Netty's and Vert.x's internals, each lookup turning off only "
      + "what it serves: " + String.join("; ", off);
  }

  /** Whether {@code io.netty:netty-codec-haproxy}, which {@link ProxyHeader} needs, is on the class path. */
  public static boolean proxyCodecPresent() {
    try {
      Class.forName("io.netty.handler.codec.haproxy.HAProxyMessageDecoder", false, Internals.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** The transport {@code vertx} runs on: nio, epoll, io_uring (or kqueue). */
  public static String transportName(Vertx vertx) {
    return VertxLine.transportName(vertx);
  }
}
