package io.frameecho.server.impl;

import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.Rejection;
import io.frameecho.server.impl.connection.ActivityOrder;
import io.frameecho.server.impl.connection.Connection;
import io.frameecho.server.impl.netty.CappedReads;
import io.frameecho.server.impl.netty.ChannelSocket;
import io.frameecho.server.impl.netty.WaitingSockets;
import io.frameecho.server.impl.shared.ConnectionLimits;
import io.frameecho.server.impl.shared.Ticker;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetSocket;

import java.util.function.BooleanSupplier;

/**
 * The book's {@code handle_accept} decision for one server instance: every accepted socket takes a slot of the
 * limits, or waits for a connection to give way to it, or is turned away. With every slot of {@code maxConnections}
 * taken, the newcomer waits for the loop's next poll of its sockets ({@link WaitingSockets}), then the connection
 * idle longest on this event loop gives its slot to it; only when none can is the newcomer turned away. On the
 * server's event loop only.
 */
final class Admission {

  /** Serves a socket whose slot is taken, its TLS handshake (if any) begun. */
  interface Serving {
    void serve(NetSocket socket, String ip);
  }

  /** At most how long a refused client's input is read and discarded before its socket closes. */
  static final long REFUSAL_LINGER_MS = 1000;
  /** How many newcomers may wait for a slot however few connections this loop has. */
  static final int FEWEST_WAITING = 16;

  private final Vertx vertx;
  private final ConnectionLimits limits;
  private final FrameEchoMetrics metrics;
  private final ActivityOrder order;
  private final Serving serving;
  private final BooleanSupplier stopping;
  private final long refusalLingerMs;
  /** Newcomers waiting for a connection to give way to them. */
  private final WaitingSockets newcomers;

  /**
   * Admits into {@code limits}; {@code order} says who gives way; {@code serving} takes an admitted socket; while
   * {@code stopping} says so nobody waits. A refused socket's input is discarded for at most {@code lingerMs} (and
   * {@link #REFUSAL_LINGER_MS}).
   */
  Admission(Vertx vertx, ConnectionLimits limits, FrameEchoMetrics metrics, ActivityOrder order,
            Ticker ticker, long lingerMs, BooleanSupplier stopping, Serving serving) {
    this.vertx = vertx;
    this.limits = limits;
    this.metrics = metrics;
    this.order = order;
    this.serving = serving;
    this.stopping = stopping;
    this.refusalLingerMs = Math.min(lingerMs, REFUSAL_LINGER_MS);
    this.newcomers = new WaitingSockets(ticker, this::decide);
  }

  /** A socket just accepted. */
  void accept(NetSocket socket) {
    accept(socket, ConnectionLimits.addressKey(socket.remoteAddress()));
  }

  /**
   * A socket just accepted whose client's address comes later (in its PROXY protocol header): it takes a slot of
   * {@code maxConnections} now; its address is counted once known.
   */
  void acceptUnaddressed(NetSocket socket) {
    accept(socket, null);
  }

  private void accept(NetSocket socket, String ip) {
    // Before its first read (a TLS handshake's, a held newcomer's): small reads while the budget is over its limit.
    CappedReads.install(socket, limits.budget()::over);
    Rejection rejection = limits.tryAcquire(ip);
    if (rejection == Rejection.MAX_CONNECTIONS) {
      if (mayWait(order.givesWay(), stopping.getAsBoolean(), newcomers.size(), order.size())) {
        newcomers.add(socket, ip);
        return;
      }
      rejection = limits.reject(Rejection.MAX_CONNECTIONS, ip);
    }
    admit(socket, ip, rejection, null);
  }

  /**
   * Whether a newcomer that found every slot taken waits for one to be given: only while connections give way and the
   * server is not stopping, and no more wait than there are connections that could give way (or a few, in a small
   * house); the rest are turned away at once.
   */
  static boolean mayWait(boolean givesWay, boolean stopping, int waiting, int connections) {
    return givesWay && !stopping && waiting < Math.max(connections, FEWEST_WAITING);
  }

  /**
   * After the loop has read what its connections' clients sent: the newcomer takes a free slot, or the slot of the
   * connection quiet longest since before it arrived, or is turned away.
   */
  private void decide(NetSocket socket, String ip, long arrivedNanos) {
    Rejection rejection = limits.tryAcquire(ip);
    Connection idle = null;
    if (rejection == Rejection.MAX_CONNECTIONS) {
      idle = order.idlest(arrivedNanos);
      rejection = idle == null ? limits.reject(Rejection.MAX_CONNECTIONS, ip) : limits.takeOver(ip);
    }
    admit(socket, ip, rejection, idle);
  }

  /** Serves the socket with its slot ({@code idle}, if not null, gives its own), or turns it away for {@code rejection}. */
  private void admit(NetSocket socket, String ip, Rejection rejection, Connection idle) {
    if (rejection != null) {
      metrics.connectionRejected(rejection);
      ChannelSocket.refuse(socket, vertx.getOrCreateContext(), refusalLingerMs);
      return;
    }
    if (idle != null) {
      order.giveWay(idle);
      limits.gaveWay(ip);
    }
    serving.serve(socket, ip);
  }

  /** The server is stopping: newcomers still waiting for a slot are turned away, as over {@code maxConnections}. */
  void turnAwayWaiting() {
    newcomers.turnAway((socket, ip, arrivedNanos) -> admit(socket, ip, limits.reject(Rejection.MAX_CONNECTIONS, ip), null));
  }

  /** The server is closing: Vert.x closes the waiting sockets with the others; none is decided for afterwards. */
  void forgetWaiting() {
    newcomers.forget();
  }
}
