package io.frameecho.server.impl.netty;

import io.netty.channel.Channel;
import io.netty.channel.ChannelException;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.epoll.EpollTcpInfo;

/**
 * The {@code state} and {@code last_data_sent} fields of an epoll socket's TCP_INFO
 * ({@link EpollSocketChannel#tcpInfo()}); -1 for other channels or when epoll is absent. On the channel's event loop.
 */
final class TcpInfo {

  /** Linux's {@code TCP_CLOSE} and {@code TCP_CLOSE_WAIT} states. */
  static final int TCP_CLOSE = 7;
  static final int TCP_CLOSE_WAIT = 8;

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

  /** An open epoll socket's TCP_INFO, or null; a closed one's descriptor may have been reused. */
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
