package io.frameecho.server.impl.netty;

import io.netty.channel.Channel;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.epoll.EpollSocketChannel;

import java.lang.reflect.Method;

/**
 * A workaround for two defects of Netty's epoll transport (4.2.13 to 4.2.21, the newest; reproduced with plain Netty in
 * src/docs/upstream/netty-epoll-half-closure.md, ready to file), through {@code AbstractEpollChannel.setFlag} and
 * {@code clearFlag}, which are not public: frame-echo's one reach past Netty's exported API, in this class.
 * <ul>
 *   <li><b>EPOLLERR kept.</b> A channel whose interest set empties (its input half-closed, nothing waiting to be
 *   written) is taken out of epoll while its registration still counts as added; the next write that must wait for the
 *   socket asks epoll to modify what it no longer has (ENOENT), and Netty shuts the output down: the responses still
 *   queued for a half-closed client would be lost. EPOLLERR is reported by epoll whether asked for or not; kept in the
 *   interest set, it changes nothing else and the set never empties.</li>
 *   <li><b>EPOLLRDHUP dropped.</b> Told that a client shut down its sending side, Netty reads that socket to its end
 *   whether reading is on or not, so no pause would hold: not the budget's, not a full write queue's, not a newcomer's
 *   wait for a slot. The end of the input is still seen, as EPOLLIN, once reading is on and the bytes before it are
 *   read; a reset still comes as EPOLLERR.</li>
 *   <li><b>Edge-triggered once the input has ended</b>, because EPOLLERR is kept: level-triggered, a reset then would
 *   be reported in every poll, and Netty, with nothing to read or write, does nothing with it.</li>
 * </ul>
 * Where the methods are not found (another Netty), nothing changes and {@link #off()} says what that costs. The epoll
 * classes are an optional dependency: without them no channel is an epoll one. Any thread; the channel methods on the
 * channel's event loop.
 */
final class EpollProbe {

  /** The probe of the Netty on the class path. */
  static final EpollProbe FOUND = new EpollProbe();

  private final Method setFlag;
  private final Method clearFlag;
  /** Why the workaround is off, or null. */
  private final String off;

  private EpollProbe() {
    Method set = null;
    Method clear = null;
    String why = null;
    try {
      set = declared(EpollSocketChannel.class, "setFlag");
      clear = declared(EpollSocketChannel.class, "clearFlag");
      set.setAccessible(true);
      clear.setAccessible(true);
    } catch (LinkageError e) {
      // No epoll classes: no epoll channel, nothing to change.
    } catch (ReflectiveOperationException | RuntimeException e) {
      set = null;
      clear = null;
      why = "on epoll, the interest-set workaround (EPOLLERR kept against Netty 4.2.13+'s half-close, EPOLLRDHUP dropped "
        + "so that a paused socket is not read) is off: " + e;
    }
    this.setFlag = set;
    this.clearFlag = clear;
    this.off = why;
  }

  /** {@code name(int)}, declared by {@code type} or a class above it (Netty's package-private {@code AbstractEpollChannel}). */
  private static Method declared(Class<?> type, String name) throws NoSuchMethodException {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      try {
        return c.getDeclaredMethod(name, int.class);
      } catch (NoSuchMethodException up) {
        // Up the hierarchy.
      }
    }
    throw new NoSuchMethodException(type.getName() + "." + name + "(int)");
  }

  /** In this order: a set emptied for a moment would take the channel out of epoll. On its event loop, once registered. */
  void forServer(Channel channel) {
    if (setFlag != null && setFlag.getDeclaringClass().isInstance(channel)) {
      invoke(setFlag, channel, EpollIoOps.EPOLLERR.value());
      invoke(clearFlag, channel, EpollIoOps.EPOLLRDHUP.value());
    }
  }

  /** The channel's input has ended: it is edge-triggered from now on. On its event loop. */
  void edgeTriggered(Channel channel) {
    if (setFlag != null && setFlag.getDeclaringClass().isInstance(channel) && channel.isRegistered()) {
      invoke(setFlag, channel, EpollIoOps.EPOLLET.value());
    }
  }

  /** Why the workaround is off on this Netty, or null. */
  String off() {
    return off;
  }

  private static void invoke(Method method, Channel channel, int flag) {
    try {
      method.invoke(channel, flag);
    } catch (ReflectiveOperationException e) {
      channel.pipeline().fireExceptionCaught(e.getCause() != null ? e.getCause() : e);
    }
  }
}
