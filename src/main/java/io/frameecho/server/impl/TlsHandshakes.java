package io.frameecho.server.impl;

import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.HandshakeFailure;
import io.frameecho.server.impl.connection.ChannelAdapter;
import io.frameecho.server.impl.shared.ConnectionLimits;
import io.vertx.core.Handler;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.ServerSSLOptions;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The TLS handshakes under way on one server instance. A socket is upgraded to TLS at accept, after it has taken its
 * slot of the connection limits: a client that never completes its handshake holds a slot, is seen by the
 * open-connections meter, and is closed after {@code sslHandshakeTimeout}. A failed handshake gives its slot back,
 * is counted by cause and summarised in the log; a completed one becomes a connection. On the server's event loop.
 */
final class TlsHandshakes {

  private final ConnectionLimits limits;
  private final FrameEchoMetrics metrics;
  private final Set<NetSocket> underWay = new HashSet<>();
  /** The key material new handshakes use; replaced by a rotation, which open connections survive. */
  private ServerSSLOptions material;
  private boolean closing;

  TlsHandshakes(ServerSSLOptions material, ConnectionLimits limits, FrameEchoMetrics metrics) {
    this.material = material;
    this.limits = limits;
    this.metrics = metrics;
  }

  /**
   * Upgrades {@code socket} (whose slot was taken for {@code ip}); {@code established} gets it once the handshake has
   * completed. Until then nothing of the frame protocol runs.
   */
  void begin(NetSocket socket, String ip, Handler<NetSocket> established) {
    underWay.add(socket);
    // Failures come through the upgrade's future; Vert.x would log the exception each one also raises.
    socket.exceptionHandler(e -> {
    });
    ChannelAdapter.upgradeToTls(socket, material).onComplete(upgrade -> {
      if (!underWay.remove(socket)) {
        return;
      }
      if (upgrade.succeeded()) {
        established.handle(socket);
        return;
      }
      limits.release(ip);
      if (closing) {
        return;
      }
      HandshakeFailure why = ChannelAdapter.handshakeFailure(upgrade.cause());
      metrics.handshakeFailed(why);
      limits.handshakeFailed(why, ip, describe(why, upgrade.cause()));
    });
  }

  private String describe(HandshakeFailure why, Throwable cause) {
    return switch (why) {
      case TIMEOUT -> "no complete handshake within " + material.getSslHandshakeTimeout() + " "
        + material.getSslHandshakeTimeoutUnit().name().toLowerCase(java.util.Locale.ROOT) + " (sslHandshakeTimeout)";
      case NOT_TLS -> "its first bytes were not a TLS record (a plain-text client?)";
      case FAILED -> cause.getMessage() != null ? cause.getMessage() : cause.getClass().getSimpleName();
    };
  }

  /** New handshakes use {@code material} from now on; those under way and open connections keep what they have. */
  void use(ServerSSLOptions material) {
    this.material = material;
  }

  ServerSSLOptions material() {
    return material;
  }

  /** On shutdown: the handshakes under way end now (they owe nothing), uncounted. */
  void closeAll() {
    closing = true;
    List.copyOf(underWay).forEach(NetSocket::close);
  }
}
