package io.frameecho.server.impl;

import io.vertx.core.net.NetServerOptions;
import io.frameecho.server.FrameEchoOptions;
import java.util.function.IntSupplier;
import io.frameecho.server.impl.connection.ConnectionSocket;
import io.frameecho.server.impl.connection.AcceptedSocket;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.HandshakeFailure;
import io.frameecho.server.Rejection;
import io.frameecho.server.impl.netty.ChannelSocket;
import io.frameecho.server.impl.netty.ProxyHeader;
import io.frameecho.server.impl.shared.ConnectionLimits;
import io.frameecho.server.impl.shared.PeerRanges;
import io.frameecho.server.impl.shared.Ticker;
import io.vertx.core.Context;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.SocketAddress;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The PROXY protocol headers awaited on one server instance ({@code netServerOptions.useProxyProtocol}), as
 * {@link Tls} handshakes are TLS handshakes: a socket from a trusted peer takes its slot of {@code maxConnections} at
 * accept, before its header, and holds it while it waits, for {@code proxyProtocolTimeout} at most; then the address
 * its header carries is the client's, for {@code maxConnectionsPerIp}, the logs and the connection. A peer outside
 * {@code proxyTrustedPeers} is closed before anything is read; a missing, invalid or late header closes the socket.
 * Each such end is counted (the failed-handshakes meter, {@code proxy_*} causes) and summarised in the log. On the
 * server's event loop.
 */
final class ProxyHeaders {

  /** Takes a socket whose header was read, with its client's address ({@code ip} its per-address key). */
  interface Read {
    void read(NetSocket socket, String ip, SocketAddress client);
  }

  private final Context context;
  private final Ticker ticker;
  private final long timeoutMs;
  private final PeerRanges trusted;
  private final ConnectionLimits limits;
  private final FrameEchoMetrics metrics;
  private final long refusalLingerMs;
  /** Sockets waiting for their header, with their timeout's timer. */
  private final Map<NetSocket, Long> underWay = new HashMap<>();
  private boolean closing;

  ProxyHeaders(Context context, Ticker ticker, long timeoutMs, PeerRanges trusted, ConnectionLimits limits,
               FrameEchoMetrics metrics, long refusalLingerMs) {
    this.context = context;
    this.ticker = ticker;
    this.timeoutMs = timeoutMs;
    this.trusted = trusted;
    this.limits = limits;
    this.metrics = metrics;
    this.refusalLingerMs = refusalLingerMs;
  }

  /**
   * Whether {@code socket}'s peer may send a header: in {@code proxyTrustedPeers}, or any peer when none is listed
   * (a unix-socket peer is a local process: trusted). One that may not is closed now, counted, and holds no slot.
   */
  boolean fromTrustedPeer(NetSocket socket) {
    SocketAddress peer = socket.remoteAddress();
    if (trusted.isEmpty() || peer == null || peer.isDomainSocket() || trusted.contains(Admission.clientAddress(peer))) {
      return true;
    }
    String ip = Admission.clientAddress(peer);
    socket.close();
    failed(HandshakeFailure.PROXY_UNTRUSTED, ip, "not in proxyTrustedPeers");
    return false;
  }

  /**
   * Reads the header of {@code socket}, which holds a slot with no address yet; {@code read} takes it once its
   * address has room in {@code maxConnectionsPerIp}. Otherwise the slot is given back and the socket closed.
   */
  void begin(NetSocket socket, Read read) {
    String peer = Admission.clientAddress(socket.remoteAddress());
    long timer = timeoutMs <= 0 ? -1 : ticker.schedule(timeoutMs, () -> {
      if (underWay.remove(socket) != null) {
        limits.release(null);
        socket.close();
        failed(HandshakeFailure.PROXY_TIMEOUT, peer, "no complete header within " + timeoutMs + " ms (proxyProtocolTimeout)");
      }
    });
    underWay.put(socket, timer);
    // Failures come through the header's future; Vert.x would log the exception each one also raises.
    socket.exceptionHandler(e -> {
    });
    ProxyHeader.read(socket).onComplete(header -> {
      Long pending = underWay.remove(socket);
      if (pending == null) {
        return;
      }
      ticker.cancel(pending);
      if (header.failed()) {
        limits.release(null);
        if (!closing && header.cause() instanceof ProxyHeader.InvalidHeader invalid) {
          failed(HandshakeFailure.PROXY_INVALID, peer, invalid.getMessage());
        }
        return;
      }
      SocketAddress client = header.result() != null ? header.result() : socket.remoteAddress();
      String ip = Admission.clientAddress(client);
      Rejection rejection = limits.takeOver(ip);
      if (rejection != null) {
        limits.release(null);
        metrics.connectionRejected(rejection);
        ChannelSocket.refuse(socket, context, refusalLingerMs);
        return;
      }
      read.read(socket, ip, client);
    });
  }

  private void failed(HandshakeFailure why, String peer, String detail) {
    metrics.handshakeFailed(why);
    limits.handshakeFailed(why, peer, detail);
  }

  /** On shutdown: the sockets still waiting for their header end now (they owe nothing), uncounted. */
  void closeAll() {
    closing = true;
    for (Map.Entry<NetSocket, Long> waiting : List.copyOf(underWay.entrySet())) {
      underWay.remove(waiting.getKey());
      ticker.cancel(waiting.getValue());
      limits.release(null);
      waiting.getKey().close();
    }
  }

  /** {@code accepted}, its client at {@code client}: the address its PROXY protocol header carried. */
  static AcceptedSocket carrying(AcceptedSocket accepted, SocketAddress client) {
    return new AcceptedSocket() {
      @Override
      public SocketAddress remoteAddress() {
        return client;
      }

      @Override
      public ConnectionSocket attach(ConnectionSocket.Events events, IntSupplier readCap) {
        return accepted.attach(events, readCap);
      }

      @Override
      public void deliverEarlyReads(ConnectionSocket.Events events) {
        accepted.deliverEarlyReads(events);
      }
    };
  }

  /** The headers {@code options} ask for ({@code netServerOptions.useProxyProtocol}), or null. */
  static ProxyHeaders ifAskedFor(FrameEchoOptions options, Context context, Ticker ticker, ConnectionLimits limits,
                                 FrameEchoMetrics metrics) {
    NetServerOptions net = options.getNetServerOptions();
    return !net.isUseProxyProtocol() ? null : new ProxyHeaders(context, ticker,
      net.getProxyProtocolTimeoutUnit().toMillis(net.getProxyProtocolTimeout()), PeerRanges.parse(options.getProxyTrustedPeers()),
      limits, metrics, Math.min(options.getLingerTimeoutMs(), Admission.REFUSAL_LINGER_MS));
  }
}
