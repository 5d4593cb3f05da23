package io.frameecho.server.impl.netty;

import io.netty.channel.Channel;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

/**
 * Netty's epoll channels beyond their public API: changes to a channel's interest set, on its event loop, while it is
 * registered (two at accept, unless given before registration, one once its input has ended), and two fields of its
 * TCP_INFO.
 * <ul>
 *   <li><b>EPOLLERR kept.</b> Netty's epoll transport from 4.2.13 on (4.2.18, the newest, included; 4.2.12 does
 *   not): a channel whose interest set empties (its input half-closed, nothing waiting to be written) is taken out
 *   of epoll, while its registration still counts as added. The next write that must wait for the socket then asks
 *   epoll to modify what it no longer has (ENOENT), and Netty shuts the output down: the responses still queued for a
 *   half-closed client would be lost. EPOLLERR is reported by epoll whether asked for or not; kept in the interest
 *   set, it changes nothing else and the set never empties.</li>
 *   <li><b>EPOLLRDHUP dropped.</b> Told that a client shut down its sending side, Netty reads that socket to its
 *   end whether reading is on or not, so no pause would hold: not the budget's, not a full write queue's, not a
 *   newcomer's wait for a slot. Netty 4.2's epoll is level-triggered: the end of the input is still seen, as EPOLLIN,
 *   once reading is on and the bytes before it are read; a reset still comes as EPOLLERR.</li>
 *   <li><b>Edge-triggered once the input has ended.</b> With the input read to its end, Netty no longer reads on
 *   EPOLLERR, and with nothing to write it does nothing else with it: kept in the set, a reset (EPOLLERR and EPOLLHUP,
 *   reported for as long as they last) would wake the event loop in every poll until the connection's next write
 *   fails. Edge-triggered, it is reported once. Nothing is read after the input ended, so Netty's level-triggered
 *   reading is not affected; writes wait for EPOLLOUT as Netty did with edge triggering before 4.2.</li>
 *   <li><b>TCP_INFO</b> through the epoll channel's public {@code tcpInfo()}: its {@code state} (a reset, a client
 *   that closed its side, whether or not the server has read that yet) and its {@code last_data_sent} (whether the
 *   kernel still sends a client data).</li>
 * </ul>
 * Each is looked up once, by name (the epoll classes may be missing, and {@code setFlag} is not public), and each
 * lookup serves one thing: one that fails turns off only what it serves, and {@link #off()} says what and why. Where
 * the epoll classes are missing altogether no epoll channel exists, and nothing is off. Stateless once built: any
 * thread; the channel methods on the channel's event loop.
 */
final class EpollProbe {

  /** Finds a class by its name, without initializing it: the class loader's, or a test's. */
  interface Lookup {
    Class<?> find(String name) throws ClassNotFoundException;
  }

  /** The probe of the epoll classes on the class path. */
  static final EpollProbe FOUND = new EpollProbe(name -> Class.forName(name, false, EpollProbe.class.getClassLoader()));

  /** Linux's {@code TCP_CLOSE} and {@code TCP_CLOSE_WAIT} states. */
  static final int TCP_CLOSE = 7;
  static final int TCP_CLOSE_WAIT = 8;

  private static final String EPOLL = "io.netty.channel.epoll.";

  /** The interest-set changes, or null when they are off. */
  private final Interest interest;
  /** The channel's interest-set field, written before registration ({@link #preset}); null when off. */
  private final Preset preset;
  /** {@code tcpInfo().state()}, or null when off. */
  private final TcpInfoField state;
  /** {@code tcpInfo().lastDataSent()}, or null when off. */
  private final TcpInfoField lastDataSent;
  /** What is off and why, one item each; empty when nothing is. */
  private final List<String> off = new ArrayList<>();

  EpollProbe(Lookup lookup) {
    boolean present;
    try {
      lookup.find(EPOLL + "Epoll");
      present = true;
    } catch (ClassNotFoundException | LinkageError e) {
      present = false;
    }
    Interest interest = null;
    Preset preset = null;
    TcpInfoField state = null;
    TcpInfoField lastDataSent = null;
    if (present) {
      try {
        interest = Interest.find(lookup);
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        off.add("the interest-set changes (EPOLLERR kept against Netty 4.2.13+'s half-close, EPOLLRDHUP dropped so that "
          + "a paused socket is not read, edge-triggered once the input has ended) are off: " + e);
      }
      try {
        // Serves the interest-set changes alone: off with them.
        preset = interest == null ? null : Preset.find(lookup);
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        off.add("accepted sockets are not given their interest set before Netty registers them, so each costs two more "
          + "epoll_ctl calls at accept: " + e);
      }
      try {
        state = TcpInfoField.find(lookup, "state");
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        off.add("TCP_INFO's state is not read, so a reset read past a pause is held and a client that closed while "
          + "paused for the budget keeps its slot: " + e);
      }
      try {
        lastDataSent = TcpInfoField.find(lookup, "lastDataSent");
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        off.add("TCP_INFO's last_data_sent is not read, so the budget does not evict a client that reads no response: " + e);
      }
    }
    this.interest = interest;
    this.preset = preset;
    this.state = state;
    this.lastDataSent = lastDataSent;
  }

  /**
   * Gives an accepted channel, not registered yet, the interest set {@link #forServer} gives it: Netty's registration
   * then adds the socket to epoll with it, and {@code forServer} finds nothing to change (at accept, no system call
   * beyond Netty's own). Not an epoll channel, or registered already: nothing. On the listener's event loop.
   */
  void preset(Object accepted) {
    if (preset != null && accepted instanceof Channel channel && interest.channel.isInstance(channel)
        && !channel.isRegistered()) {
      preset.apply(channel);
    }
  }

  /** In this order: a set emptied for a moment would take the channel out of epoll. On its event loop, once registered. */
  void forServer(Channel channel) {
    if (interest != null && interest.channel.isInstance(channel)) {
      interest.set(channel, interest.epollErr);
      interest.clear(channel, interest.epollRdHup);
    }
  }

  /** The channel's input has ended: it is edge-triggered from now on. On its event loop. */
  void edgeTriggered(Channel channel) {
    if (interest != null && interest.channel.isInstance(channel) && channel.isRegistered()) {
      interest.set(channel, interest.epollEt);
    }
  }

  /**
   * The kernel's state of the channel's TCP connection, or -1 on other channels and where it cannot be read. While
   * the server has not closed its side, {@link #TCP_CLOSE} means a reset, {@link #TCP_CLOSE_WAIT} a client that closed
   * its side.
   */
  int tcpState(Channel channel) {
    return (int) (state == null ? -1 : state.read(channel));
  }

  /**
   * Milliseconds since the kernel last sent the client a byte of data (TCP_INFO's {@code last_data_sent}), or -1 on
   * other channels. With data queued, it sends whenever the client's window opens by a segment: it grows while the
   * client reads nothing (zero-window probes carry no data), and for a while between a slow reader's segments.
   */
  long msSinceDataSent(Channel channel) {
    return lastDataSent == null ? -1 : lastDataSent.read(channel);
  }

  /** What is off and why, one item each; empty when nothing is. */
  List<String> off() {
    return List.copyOf(off);
  }

  /** For the start-up line: what the interest-set changes do, if they are on. */
  String description() {
    return interest != null ? "; epoll channels keep EPOLLERR in their interest set (Netty 4.2.13+ half-close), drop "
      + "EPOLLRDHUP (a paused socket is not read) and turn edge-triggered once their input has ended" : "";
  }

  /** {@code AbstractEpollChannel.setFlag} and {@code clearFlag}, and the flags they are given. */
  private record Interest(Class<?> channel, Method setFlag, Method clearFlag, int epollErr, int epollRdHup, int epollEt) {

    static Interest find(Lookup lookup) throws ReflectiveOperationException {
      Class<?> channel = lookup.find(EPOLL + "AbstractEpollChannel");
      Method setFlag = channel.getDeclaredMethod("setFlag", int.class);
      Method clearFlag = channel.getDeclaredMethod("clearFlag", int.class);
      setFlag.setAccessible(true);
      clearFlag.setAccessible(true);
      Class<?> ops = lookup.find(EPOLL + "EpollIoOps");
      Method value = ops.getMethod("value");
      return new Interest(channel, setFlag, clearFlag, (int) value.invoke(ops.getField("EPOLLERR").get(null)),
        (int) value.invoke(ops.getField("EPOLLRDHUP").get(null)), (int) value.invoke(ops.getField("EPOLLET").get(null)));
    }

    void set(Channel channel, int flag) {
      invoke(setFlag, channel, flag);
    }

    void clear(Channel channel, int flag) {
      invoke(clearFlag, channel, flag);
    }

    private static void invoke(Method method, Channel channel, int flag) {
      try {
        method.invoke(channel, flag);
      } catch (ReflectiveOperationException e) {
        channel.pipeline().fireExceptionCaught(e.getCause() != null ? e.getCause() : e);
      }
    }
  }

  /** {@code AbstractEpollChannel.ops} and {@code EpollIoOps}' {@code with} and {@code without}, with the two flags. */
  private record Preset(Field ops, Method with, Method without, Object epollErr, Object epollRdHup) {

    static Preset find(Lookup lookup) throws ReflectiveOperationException {
      Field ops = lookup.find(EPOLL + "AbstractEpollChannel").getDeclaredField("ops");
      ops.setAccessible(true);
      Class<?> type = lookup.find(EPOLL + "EpollIoOps");
      return new Preset(ops, type.getMethod("with", type), type.getMethod("without", type), type.getField("EPOLLERR").get(null),
        type.getField("EPOLLRDHUP").get(null));
    }

    void apply(Channel channel) {
      try {
        ops.set(channel, without.invoke(with.invoke(ops.get(channel), epollErr), epollRdHup));
      } catch (ReflectiveOperationException | RuntimeException e) {
        // Left as Netty made it: forServer changes it once registered.
      }
    }
  }

  /** One field of {@code EpollSocketChannel.tcpInfo()}. */
  private record TcpInfoField(Method tcpInfo, Method field) {

    static TcpInfoField find(Lookup lookup, String name) throws ReflectiveOperationException {
      return new TcpInfoField(lookup.find(EPOLL + "EpollSocketChannel").getMethod("tcpInfo"),
        lookup.find(EPOLL + "EpollTcpInfo").getMethod(name));
    }

    /** The field, or -1 on other channels and where it cannot be read. */
    long read(Channel channel) {
      if (!tcpInfo.getDeclaringClass().isInstance(channel)) {
        return -1;
      }
      try {
        return ((Number) field.invoke(tcpInfo.invoke(channel))).longValue();
      } catch (ReflectiveOperationException | RuntimeException e) {
        return -1;
      }
    }
  }
}
