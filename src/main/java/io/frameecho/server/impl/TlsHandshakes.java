package io.frameecho.server.impl;

import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.HandshakeFailure;
import io.frameecho.server.impl.netty.TlsUpgrade;
import io.frameecho.server.impl.shared.ConnectionLimits;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.SSLEngineOptions;
import io.vertx.core.net.ServerSSLOptions;
import io.vertx.core.shareddata.Shareable;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The TLS handshakes under way on one server instance. A socket is upgraded to TLS at accept, after it has taken its
 * slot of the connection limits: a client that never completes its handshake holds a slot, is seen by the
 * open-connections meter, and is closed after {@code sslHandshakeTimeout}. A failed handshake gives its slot back,
 * is counted by cause and summarised in the log; a completed one becomes a connection. On the server's event loop,
 * but for a rotation ({@link #update}), which loads the new key material on a worker thread and swaps it in there.
 */
final class TlsHandshakes {

  /** The Vert.x instance's local map where its TLS servers are found by {@link #reloadAll}. */
  private static final String SHARED_KEY = "frame-echo.tls-servers";

  private final Vertx vertx;
  private final Context context;

  private final ConnectionLimits limits;
  private final FrameEchoMetrics metrics;
  private final Set<NetSocket> underWay = new HashSet<>();
  /** The key material new handshakes use, loaded; replaced by a rotation, which open connections survive. */
  private ServerSSLOptions material;
  /** The options {@link #material} was loaded from (file names): what {@link #reload} reads again. */
  private volatile ServerSSLOptions configured;
  /** The TLS engine the listener's options select (null: Vert.x's default): what a rotation's options are checked against. */
  private final SSLEngineOptions engine;
  private boolean closing;

  TlsHandshakes(Vertx vertx, Context context, ServerSSLOptions configured, ServerSSLOptions material, SSLEngineOptions engine,
                ConnectionLimits limits, FrameEchoMetrics metrics) {
    this.vertx = vertx;
    this.context = context;
    this.configured = configured;
    this.material = material;
    this.engine = engine;
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
    TlsUpgrade.upgradeToTls(socket, material).onComplete(upgrade -> {
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
      HandshakeFailure why = TlsUpgrade.handshakeFailure(upgrade.cause());
      metrics.handshakeFailed(why);
      limits.handshakeFailed(why, ip, describe(why, upgrade.cause()));
    });
  }

  private String describe(HandshakeFailure why, Throwable cause) {
    return switch (why) {
      case TIMEOUT -> "no complete handshake within " + material.getSslHandshakeTimeout() + " "
        + material.getSslHandshakeTimeoutUnit().name().toLowerCase(java.util.Locale.ROOT) + " (sslHandshakeTimeout)";
      case NOT_TLS -> "its first bytes were not a TLS record (a plain-text client?)";
      default -> cause.getMessage() != null ? cause.getMessage() : cause.getClass().getSimpleName();
    };
  }

  /**
   * A rotation: {@code options} (copied) are loaded and checked on a worker thread, then every new handshake uses
   * them; handshakes under way and open connections keep what they have. If they do not load, nothing changes and
   * the future fails with the reason. Any thread.
   */
  Future<Void> update(ServerSSLOptions options) {
    ServerSSLOptions copy = options.copy();
    // Vert.x's options replace every TLS setting at once: a new key passed alone would silently stop asking
    // clients for certificates.
    ClientAuth before = configured.getClientAuth();
    ClientAuth after = copy.getClientAuth();
    if (after.ordinal() < before.ordinal() || (after != ClientAuth.NONE && copy.getTrustOptions() == null)) {
      return Future.failedFuture(new IllegalArgumentException("updateTls: the new options ask clients for certificates "
        + (after.ordinal() < before.ordinal() ? "less than now (clientAuth " + before + ", new " + after + ")" : "without trust options")
        + "; TLS options replace each other whole: pass clientAuth and the trust options again with the new key and "
        + "certificate (to stop asking for client certificates, restart the server); the certificate in use is kept"));
    }
    return TlsMaterial.load(vertx, copy, engine).compose(loaded -> {
      Promise<Void> swapped = Promise.promise();
      context.runOnContext(v -> {
        material = loaded;
        configured = copy;
        swapped.complete();
      });
      return swapped.future();
    });
  }

  /** Re-reads the files the current options name: a certificate rotated on disk, as SIGHUP does. */
  Future<Void> reload() {
    return update(configured);
  }

  /** From now on, {@link #reloadAll} finds this server; until {@link #closeAll}. */
  void register() {
    servers(vertx).add(this);
  }

  /** On shutdown: the handshakes under way end now (they owe nothing), uncounted. */
  void closeAll() {
    servers(vertx).remove(this);
    closing = true;
    List.copyOf(underWay).forEach(NetSocket::close);
  }

  /**
   * {@link #reload} on every TLS server listening in {@code vertx}; completes with how many there are, or fails with
   * the first reason one failed (those that could load theirs use it).
   */
  static Future<Integer> reloadAll(Vertx vertx) {
    List<TlsHandshakes> all = new ArrayList<>(servers(vertx));
    List<Future<Void>> reloads = new ArrayList<>();
    all.forEach(server -> reloads.add(server.reload()));
    return Future.join(reloads).map(all.size()).recover(e -> Future.failedFuture(
      reloads.stream().filter(Future::failed).findFirst().map(Future::cause).orElse(e)));
  }

  private static Set<TlsHandshakes> servers(Vertx vertx) {
    return ((Servers) vertx.sharedData().getLocalMap(SHARED_KEY).computeIfAbsent(SHARED_KEY, k -> new Servers())).set;
  }

  /** The TLS servers of one Vert.x instance. */
  private static final class Servers implements Shareable {
    private final Set<TlsHandshakes> set = ConcurrentHashMap.newKeySet();
  }
}
