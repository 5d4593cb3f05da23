package io.frameecho.server.impl.netty;

import io.netty.channel.Channel;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.epoll.EpollSocketChannel;

import java.lang.reflect.Method;

/**
 * Works around two defects in Netty's epoll transport, reproduced in src/docs/upstream/netty-epoll-half-closure.md, via
 * the non-public {@code AbstractEpollChannel.setFlag} and {@code clearFlag}:
 * <ul>
 *   <li><b>EPOLLERR kept</b>: when a half-closed channel's interest set empties, Netty drops it from epoll but still
 *   treats it as registered, so the next pending write fails (ENOENT) and the queued responses are lost. EPOLLERR is
 *   always reported anyway, so keeping it changes nothing else and the set never empties.</li>
 *   <li><b>EPOLLRDHUP dropped</b>: after a client half-closes, Netty reads to the end even with reading off, so no
 *   pause would hold. The end of input still arrives as EPOLLIN once reading resumes; a reset still as EPOLLERR.</li>
 *   <li><b>Edge-triggered after the input ends</b>: with EPOLLERR kept, level-triggering would report a reset on every
 *   poll.</li>
 * </ul>
 * If the methods are missing, nothing changes and {@link #off()} says why. The channel methods run on its event loop.
 */
final class EpollProbe {

  /** The probe for the Netty on the class path. */
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
      // No epoll classes, so no epoll channels.
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

  /** {@code name(int)} declared by {@code type} or a superclass. */
  private static Method declared(Class<?> type, String name) throws NoSuchMethodException {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      try {
        return c.getDeclaredMethod(name, int.class);
      } catch (NoSuchMethodException up) {
      }
    }
    throw new NoSuchMethodException(type.getName() + "." + name + "(int)");
  }

  /** Applies the workaround; EPOLLERR first, so the set never empties. On its event loop, once registered. */
  void forServer(Channel channel) {
    if (setFlag != null && setFlag.getDeclaringClass().isInstance(channel)) {
      invoke(setFlag, channel, EpollIoOps.EPOLLERR.value());
      invoke(clearFlag, channel, EpollIoOps.EPOLLRDHUP.value());
    }
  }

  /** Switches to edge-triggered after the input ended. On its event loop. */
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
