package io.frameecho.server.impl.netty;

import io.netty.channel.Channel;
import io.netty.channel.ChannelException;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.epoll.EpollTcpInfo;

/**
 * Two fields of the kernel's TCP_INFO of an epoll socket, through Netty's public {@link EpollSocketChannel#tcpInfo()}:
 * its {@code state} (a reset, a client that closed its side, whether or not the server has read that yet) and its
 * {@code last_data_sent} (whether the kernel still sends a client data). Other channels have neither: -1. The epoll
 * classes are an optional dependency; without them no channel is an epoll one. On the channel's event loop.
 */
final class TcpInfo {

  /** Linux's {@code TCP_CLOSE} and {@code TCP_CLOSE_WAIT} states. */
  static final int TCP_CLOSE = 7;
  static final int TCP_CLOSE_WAIT = 8;

  /** Whether Netty's epoll classes are on the class path. */
  private static final boolean EPOLL_CLASSES = epollClasses();

  private TcpInfo() {
  }

  private static boolean epollClasses() {
    try {
      return Epoll.class != null;
    } catch (LinkageError e) {
      return false;
    }
  }

  /** The kernel's state of the channel's TCP connection, or -1 where it cannot be read. */
  static int state(Channel channel) {
    EpollTcpInfo info = read(channel);
    return info == null ? -1 : info.state();
  }

  /** Milliseconds since the kernel last sent the client a byte of data, or -1 where it cannot be read. */
  static long msSinceDataSent(Channel channel) {
    EpollTcpInfo info = read(channel);
    return info == null ? -1 : info.lastDataSent();
  }

  /** The TCP_INFO of an open epoll socket (a closed one's descriptor may be another socket's now), or null. */
  private static EpollTcpInfo read(Channel channel) {
    if (!EPOLL_CLASSES || !(channel instanceof EpollSocketChannel epoll) || !channel.isOpen()) {
      return null;
    }
    try {
      return epoll.tcpInfo();
    } catch (ChannelException e) {
      return null;
    }
  }
}
