package io.frameecho.server.impl.netty;

import io.netty.channel.Channel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollSocketChannel;

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
    return EPOLL_CLASSES && channel instanceof EpollSocketChannel epoll ? epoll.tcpInfo().state() : -1;
  }

  /** Milliseconds since the kernel last sent the client a byte of data, or -1 where it cannot be read. */
  static long msSinceDataSent(Channel channel) {
    return EPOLL_CLASSES && channel instanceof EpollSocketChannel epoll ? epoll.tcpInfo().lastDataSent() : -1;
  }
}
