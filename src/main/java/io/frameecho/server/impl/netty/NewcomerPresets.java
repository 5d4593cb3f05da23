package io.frameecho.server.impl.netty;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.unix.IntegerUnixChannelOption;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.TCPSSLOptions;

/**
 * What a listener gives each socket it accepts before Netty registers it, set up once before the listener binds, so
 * that an accept costs no system call beyond Netty's own: the socket's epoll interest set ({@link EpollProbe#preset},
 * by a handler first in the listener's pipeline) and TCP keep-alive. Linux copies {@code SO_KEEPALIVE},
 * {@code TCP_KEEPIDLE}, {@code TCP_KEEPINTVL} and {@code TCP_KEEPCNT} from a listening socket to each socket made from
 * it at the end of a handshake: set once on the listener, they cost nothing per accept, where Vert.x sets them on each
 * socket (up to four {@code setsockopt}).
 * <p>
 * Only on epoll with the preset on, over TCP, for a server {@link LoopAcceptor} makes (it hands this the listener's
 * bootstrap before the bind, so no socket is made before the listener has its presets); elsewhere Vert.x sets
 * keep-alive on each socket and the interest set is changed once the socket is registered. A port shared with other
 * servers is shared as Vert.x shares it: the first server's listener, with its settings, accepts for all.
 * <b>Threading:</b> made on the server's event loop; its handler runs on the listener's.
 */
public final class NewcomerPresets {

  /** Nothing preset: Vert.x sets keep-alive on each socket. */
  static final NewcomerPresets NONE = new NewcomerPresets(false, false, null);

  private static final int SOL_SOCKET = 1;
  /** Through the epoll channel's raw options: Netty's {@code SO_KEEPALIVE} is a socket's option, not a listener's. */
  private static final IntegerUnixChannelOption KEEP_ALIVE = new IntegerUnixChannelOption("SO_KEEPALIVE", SOL_SOCKET, 9);

  /** Whether the listener gives its sockets their presets. */
  private final boolean onListener;
  /** {@code SO_KEEPALIVE}, given by the listener. */
  private final boolean keepAlive;
  /** The keep-alive times the listener gives, or null: the kernel's. */
  private final KeepAliveTimes times;

  NewcomerPresets(boolean onListener, boolean keepAlive, KeepAliveTimes times) {
    this.onListener = onListener;
    this.keepAlive = keepAlive;
    this.times = times;
  }

  /**
   * The presets of a server that listens with {@code net} on {@code vertx} (on a unix socket if {@code unixSocket}). Where
   * the listener gives them, the keep-alive times Vert.x would set on each socket are taken out of {@code net} (which
   * this changes).
   */
  public static NewcomerPresets of(Vertx vertx, NetServerOptions net, boolean unixSocket) {
    if (unixSocket || !"epoll".equals(VertxLine.transportName(vertx)) || !EpollProbe.FOUND.presets() || !LoopAcceptor.makesServers()) {
      return NONE;
    }
    return new NewcomerPresets(true, net.isTcpKeepAlive(), KeepAliveTimes.takeFrom(net));
  }

  /**
   * Before the listener binds: each socket it accepts passes {@link Presetting} before it is registered, and has the
   * listener's keep-alive (Vert.x's own per-socket {@code SO_KEEPALIVE} is taken out). Nothing without presets.
   */
  void onListener(ServerBootstrap bootstrap) {
    if (!onListener) {
      return;
    }
    bootstrap.handler(new Presetting());
    bootstrap.childOption(ChannelOption.SO_KEEPALIVE, null);
    if (keepAlive) {
      bootstrap.option(KEEP_ALIVE, 1);
      if (times != null) {
        times.giveTo(bootstrap);
      }
    }
  }

  /** On the listener's event loop: each accepted channel passes it before Netty's acceptor registers it. */
  static final class Presetting extends ChannelInboundHandlerAdapter {

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object accepted) {
      EpollProbe.FOUND.preset(accepted);
      ctx.fireChannelRead(accepted);
    }
  }

  /** {@code TCP_KEEPIDLE}, {@code TCP_KEEPINTVL} and {@code TCP_KEEPCNT}, each set when above 0 (else the kernel's). */
  record KeepAliveTimes(int idleSeconds, int intervalSeconds, int count) {

    private static final int IPPROTO_TCP = 6;
    private static final IntegerUnixChannelOption KEEP_IDLE = new IntegerUnixChannelOption("TCP_KEEPIDLE", IPPROTO_TCP, 4);
    private static final IntegerUnixChannelOption KEEP_INTERVAL = new IntegerUnixChannelOption("TCP_KEEPINTVL", IPPROTO_TCP, 5);
    private static final IntegerUnixChannelOption KEEP_COUNT = new IntegerUnixChannelOption("TCP_KEEPCNT", IPPROTO_TCP, 6);

    /**
     * The times in {@code net}, taken out of it (Vert.x sets none per socket then), or null: keep-alive off, no times
     * set, or a Vert.x line without them (5.0).
     */
    static KeepAliveTimes takeFrom(NetServerOptions net) {
      if (!net.isTcpKeepAlive()) {
        return null;
      }
      // Through TCPSSLOptions, whose keep-alive setters have one signature on every line that has them.
      TCPSSLOptions tcp = net;
      KeepAliveTimes times;
      try {
        times = new KeepAliveTimes(tcp.getTcpKeepAliveIdleSeconds(), tcp.getTcpKeepAliveIntervalSeconds(), tcp.getTcpKeepAliveCount());
      } catch (LinkageError e) {
        return null;
      }
      if (times.idleSeconds <= 0 && times.intervalSeconds <= 0 && times.count <= 0) {
        return null;
      }
      tcp.setTcpKeepAliveIdleSeconds(0);
      tcp.setTcpKeepAliveIntervalSeconds(0);
      tcp.setTcpKeepAliveCount(0);
      return times;
    }

    /** The listener's options: the times it gives. */
    void giveTo(ServerBootstrap listener) {
      set(listener, KEEP_IDLE, idleSeconds);
      set(listener, KEEP_INTERVAL, intervalSeconds);
      set(listener, KEEP_COUNT, count);
    }

    private static void set(ServerBootstrap listener, IntegerUnixChannelOption option, int value) {
      if (value > 0) {
        listener.option(option, value);
      }
    }
  }
}
