package io.frameecho.server.impl.netty;

import io.netty.channel.Channel;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.unix.IntegerUnixChannelOption;
import io.netty.channel.unix.RawUnixChannelOption;
import io.netty.util.AttributeKey;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.TCPSSLOptions;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * What a listener gives each socket it accepts before Netty registers it, so that an accept costs no system call beyond
 * Netty's and Vert.x's own: its epoll interest set ({@link EpollProbe#preset}) and its TCP keep-alive times. Linux
 * copies {@code TCP_KEEPIDLE}, {@code TCP_KEEPINTVL} and {@code TCP_KEEPCNT} from a listening socket to each socket
 * made from it at the end of a handshake: set once on the listener, they cost nothing per accept, where Vert.x sets them
 * on each socket (three {@code setsockopt}). Vert.x still sets {@code SO_KEEPALIVE} on each socket (as it clears it when
 * keep-alive is off); times without it do nothing, so another server sharing the listener is not changed.
 * <p>
 * The listener is reached from its first accepted socket. A socket made before the listener had the times is given them
 * itself: one accepted before the listener's handler was in place, at its arrival (its interest set was not preset:
 * the handler never saw it); one still in the kernel's accept queue when the listener got the times, by the handler (as
 * many as the listener's TCP_INFO counted queued then, oldest first, as the queue hands them out). Only on epoll with the
 * preset on, where the interest set tells a socket the handler has seen; elsewhere Vert.x sets the times on each socket,
 * as before. <b>Threading:</b> {@link #arrived} on the socket's event loop; the handler, and the listener's set-up, on
 * the listener's.
 */
public final class NewcomerPresets {

  /** Set on a listening channel once its handler is being put in place. */
  private static final AttributeKey<Boolean> PRESET = AttributeKey.valueOf("frame-echo.preset-newcomers");
  static final String PRESET_HANDLER = "frame-echo-preset";

  /** The times the listener gives its sockets, or null: Vert.x sets them (or none are set). */
  private final KeepAliveTimes times;

  NewcomerPresets(KeepAliveTimes times) {
    this.times = times;
  }

  /**
   * The presets of a server that listens with {@code net} on {@code vertx} (on a unix socket if {@code unixSocket}). On
   * epoll over TCP with the preset on, the keep-alive times Vert.x would set on each socket are taken out of {@code net}
   * (which this changes) to be given by the listener.
   */
  public static NewcomerPresets of(Vertx vertx, NetServerOptions net, boolean unixSocket) {
    boolean listenerGivesTimes = !unixSocket && "epoll".equals(VertxLine.transportName(vertx)) && EpollProbe.FOUND.presets();
    return new NewcomerPresets(listenerGivesTimes ? KeepAliveTimes.takeFrom(net) : null);
  }

  /** The keep-alive times the listener gives, or null. */
  KeepAliveTimes times() {
    return times;
  }

  /**
   * A socket just accepted, before anything else is done with it: the first one puts the presets in place on its
   * listener; one the listener's handler has not seen is given the keep-alive times itself. On the socket's event loop.
   */
  public void arrived(NetSocket socket) {
    arrived(VertxLine.channelOf(socket));
  }

  void arrived(Channel channel) {
    Channel listener = channel.parent();
    if (listener != null && listener.attr(PRESET).setIfAbsent(Boolean.TRUE) == null) {
      listener.eventLoop().execute(() -> presetFrom(listener));
    }
    if (times != null && !EpollProbe.FOUND.wasPreset(channel)) {
      times.give(channel.config());
    }
  }

  /** On the listener's event loop: from now on each socket it accepts passes the handler before it is registered. */
  private void presetFrom(Channel listener) {
    int owed = times == null ? 0 : times.giveListener(listener.config());
    listener.pipeline().addFirst(PRESET_HANDLER, new Presetting(times, owed));
  }

  /** On the listener's event loop: each accepted channel passes it before Netty's acceptor registers it. */
  static final class Presetting extends ChannelInboundHandlerAdapter {

    private final KeepAliveTimes times;
    /** Sockets still to be given the times themselves: made before the listener had them. */
    private int owed;

    Presetting(KeepAliveTimes times, int owed) {
      this.times = times;
      this.owed = owed;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object accepted) {
      EpollProbe.FOUND.preset(accepted);
      if (owed > 0 && accepted instanceof Channel channel) {
        owed--;
        times.give(channel.config());
      }
      ctx.fireChannelRead(accepted);
    }

    /** Sockets still to be given the times themselves. */
    int owed() {
      return owed;
    }
  }

  /** {@code TCP_KEEPIDLE}, {@code TCP_KEEPINTVL} and {@code TCP_KEEPCNT}, each set when above 0 (else the kernel's). */
  record KeepAliveTimes(int idleSeconds, int intervalSeconds, int count) {

    private static final int IPPROTO_TCP = 6;
    private static final IntegerUnixChannelOption KEEP_IDLE = new IntegerUnixChannelOption("TCP_KEEPIDLE", IPPROTO_TCP, 4);
    private static final IntegerUnixChannelOption KEEP_INTERVAL = new IntegerUnixChannelOption("TCP_KEEPINTVL", IPPROTO_TCP, 5);
    private static final IntegerUnixChannelOption KEEP_COUNT = new IntegerUnixChannelOption("TCP_KEEPCNT", IPPROTO_TCP, 6);
    private static final RawUnixChannelOption TCP_INFO = new RawUnixChannelOption("TCP_INFO", IPPROTO_TCP, 11, 104);
    /** Where {@code tcpi_unacked} is in Linux's {@code struct tcp_info}: for a listener, its accept queue's length. */
    private static final int TCPI_UNACKED = 24;

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

    /** Sets the times on a socket. */
    void give(ChannelConfig socket) {
      set(socket, KEEP_IDLE, idleSeconds);
      set(socket, KEEP_INTERVAL, intervalSeconds);
      set(socket, KEEP_COUNT, count);
    }

    /**
     * Sets the times on a listening socket; returns how many sockets, made before, are still queued to be accepted (and
     * so must be given the times themselves): all of them, as far as anyone can tell, where this fails.
     */
    int giveListener(ChannelConfig listener) {
      try {
        give(listener);
        ByteBuffer info = listener.getOption(TCP_INFO).order(ByteOrder.nativeOrder());
        return info.remaining() >= TCPI_UNACKED + 4 ? info.getInt(info.position() + TCPI_UNACKED) : Integer.MAX_VALUE;
      } catch (RuntimeException e) {
        return Integer.MAX_VALUE;
      }
    }

    private static void set(ChannelConfig socket, IntegerUnixChannelOption option, int value) {
      if (value > 0) {
        socket.setOption(option, value);
      }
    }
  }
}
