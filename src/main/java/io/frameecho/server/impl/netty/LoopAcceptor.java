package io.frameecho.server.impl.netty;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.internal.VertxWrapper;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.spi.transport.Transport;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;

/**
 * A Vert.x {@link NetServer} that accepts on its own event loop. Vert.x's server accepts on Vert.x's acceptor thread and
 * hands each socket to the server's event loop as a task (a wake-up and a switch of threads per connection); Vert.x
 * has no option for the acceptor and takes it from {@code VertxInternal.acceptorEventLoopGroup()} of the instance the
 * server was made with. So the server is made, as Vert.x makes it, with a view of the Vert.x instance whose acceptor is
 * the server's event loop: the listening channel is registered there, and Netty registers each accepted socket inline,
 * on the thread that accepted it. Everything else is Vert.x's own (its sockets, sharing a port, shutdown, metrics),
 * except that the same view hands the listener's bootstrap to {@link NewcomerPresets} before the bind (through its
 * transport's {@code configure}, which Vert.x calls last), so that the listener gives its sockets what Vert.x would set
 * on each.
 * <p>
 * Vert.x 5.0 makes its server with {@code io.vertx.core.net.impl.NetServerImpl(VertxInternal, NetServerOptions)},
 * 5.1 and 5.2 with {@code io.vertx.core.net.impl.tcp.NetServerBuilder(VertxInternal, NetServerOptions).build()}: each
 * looked up once; where neither is found, the server is Vert.x's public one (accepting on the acceptor thread) and
 * {@link #off()} says why. Any thread; {@link #create} on the server's event loop.
 */
public final class LoopAcceptor {

  /** This line's maker of servers, as {@code (VertxInternal, NetServerOptions)NetServer}; null where not found. */
  static final MethodHandle MAKER;
  /** Why servers accept on Vert.x's acceptor thread, or null. */
  private static final String OFF;

  static {
    MethodHandle maker = null;
    String off = null;
    MethodHandles.Lookup lookup = MethodHandles.publicLookup();
    MethodType made = MethodType.methodType(void.class, VertxInternal.class, NetServerOptions.class);
    try {
      Class<?> builder = Class.forName("io.vertx.core.net.impl.tcp.NetServerBuilder", false, LoopAcceptor.class.getClassLoader());
      MethodHandle build = lookup.findVirtual(builder, "build", MethodType.methodType(Class.forName(
        "io.vertx.core.internal.net.NetServerInternal", false, LoopAcceptor.class.getClassLoader())));
      maker = MethodHandles.filterReturnValue(lookup.findConstructor(builder, made), build);
    } catch (ReflectiveOperationException | LinkageError | RuntimeException on51) {
      try {
        Class<?> server = Class.forName("io.vertx.core.net.impl.NetServerImpl", false, LoopAcceptor.class.getClassLoader());
        maker = lookup.findConstructor(server, made);
      } catch (ReflectiveOperationException | LinkageError | RuntimeException on50) {
        off = "accepting on the server's own event loop is off (sockets are accepted on Vert.x's acceptor thread and "
          + "handed over): neither NetServerBuilder (5.1, 5.2) nor NetServerImpl (5.0) was found (" + on51 + "; " + on50 + ")";
      }
    }
    MAKER = maker == null ? null : maker.asType(MethodType.methodType(NetServer.class, VertxInternal.class, NetServerOptions.class));
    OFF = off;
  }

  private LoopAcceptor() {
  }

  /**
   * A server for {@code options} that accepts on {@code context}'s event loop (the caller's), its listener set up with
   * {@code presets}; or Vert.x's own one where this line's maker was not found (no presets then).
   */
  public static NetServer create(Vertx vertx, Context context, NetServerOptions options, NewcomerPresets presets) {
    if (MAKER == null) {
      return vertx.createNetServer(options);
    }
    EventLoop loop = ((ContextInternal) context).nettyEventLoop();
    try {
      return (NetServer) MAKER.invokeExact((VertxInternal) new AcceptingOn(vertx, loop, presets), options.copy());
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException("making a Vert.x server failed", e);
    }
  }

  /** Why servers accept on Vert.x's acceptor thread, or null when they accept on their own event loop. */
  static String off() {
    return OFF;
  }

  /** Whether servers are made here (and so their listeners set up before they bind). */
  static boolean makesServers() {
    return MAKER != null;
  }

  /**
   * The Vert.x instance as a server sees it, with {@code loop} as its acceptor and a transport that hands the
   * listener's bootstrap to {@code presets}; the rest is the instance's own.
   */
  private static final class AcceptingOn extends VertxWrapper {

    private final EventLoop loop;
    private final Transport transport;

    AcceptingOn(Vertx vertx, EventLoop loop, NewcomerPresets presets) {
      super((VertxInternal) vertx);
      this.loop = loop;
      this.transport = settingUpListeners(((VertxInternal) vertx).transport(), presets);
    }

    @Override
    public EventLoopGroup acceptorEventLoopGroup() {
      return loop;
    }

    @Override
    public Transport transport() {
      return transport;
    }

    /**
     * {@code transport}, whose {@code configure} of a server's bootstrap (its options' type differs between the lines)
     * then has {@code presets} set the listener up.
     */
    private static Transport settingUpListeners(Transport transport, NewcomerPresets presets) {
      InvocationHandler calls = (proxy, method, args) -> {
        Object result;
        try {
          result = method.invoke(transport, args);
        } catch (InvocationTargetException e) {
          throw e.getCause();
        }
        if (method.getName().equals("configure") && args != null && args[args.length - 1] instanceof ServerBootstrap listener) {
          presets.onListener(listener);
        }
        return result;
      };
      return (Transport) Proxy.newProxyInstance(Transport.class.getClassLoader(), new Class<?>[] {Transport.class}, calls);
    }
  }
}
