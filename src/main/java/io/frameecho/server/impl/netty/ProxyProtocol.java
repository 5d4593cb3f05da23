package io.frameecho.server.impl.netty;

import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.HandshakeFailure;
import io.frameecho.server.Rejection;
import io.frameecho.server.impl.shared.ConnectionLimits;
import io.frameecho.server.impl.shared.PeerRanges;
import io.frameecho.server.impl.shared.Ticker;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.haproxy.HAProxyCommand;
import io.netty.handler.codec.haproxy.HAProxyMessage;
import io.netty.handler.codec.haproxy.HAProxyMessageDecoder;
import io.netty.handler.codec.haproxy.HAProxyProtocolException;
import io.netty.handler.codec.haproxy.HAProxyProxiedProtocol;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.SocketAddress;

import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The PROXY protocol (v1, v2) on one server instance ({@code netServerOptions.useProxyProtocol}). frame-echo reads the
 * header itself, with Netty's {@link HAProxyMessageDecoder} placed before Vert.x's handler, rather than through
 * Vert.x's own {@code useProxyProtocol}, which reads it before the socket is counted anywhere: here a socket from a
 * trusted peer holds its slot of {@code maxConnections} from accept, for {@code proxyProtocolTimeout} at most; then the
 * address its header carries is the client's, for {@code maxConnectionsPerIp}, the logs and the connection. A peer
 * outside {@code proxyTrustedPeers} is closed before anything is read; a missing, invalid or late header closes the
 * socket, and each such end is counted (the failed-handshakes meter, {@code proxy_*} causes) and summarised in the log.
 * Bytes after the header are kept for the connection ({@link Sockets#keepEarlyReads}). On the server's event loop; needs
 * {@code netty-codec-haproxy}, so this class is loaded only when the protocol is asked for.
 */
public final class ProxyProtocol {

  /** Takes a socket whose header was read, with its client's address ({@code ip} its per-address key). */
  public interface Read {
    /** {@code socket} holds its slot, counted for {@code ip}; {@code client} is the address its header carried. */
    void read(NetSocket socket, String ip, SocketAddress client);
  }

  static final String DECODER = "frame-echo-proxy-decoder";
  static final String READER = "frame-echo-proxy-reader";
  /** The prefixes of a v1 and a v2 header. */
  private static final byte[] V1 = "PROXY ".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] V2 = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};

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

  /** The protocol as {@code options} configure it; a refused client's input is discarded for {@code refusalLingerMs}. */
  public ProxyProtocol(FrameEchoOptions options, Context context, Ticker ticker, ConnectionLimits limits,
                       FrameEchoMetrics metrics, long refusalLingerMs) {
    NetServerOptions net = options.getNetServerOptions();
    this.context = context;
    this.ticker = ticker;
    this.timeoutMs = net.getProxyProtocolTimeoutUnit().toMillis(net.getProxyProtocolTimeout());
    this.trusted = PeerRanges.parse(options.getProxyTrustedPeers());
    this.limits = limits;
    this.metrics = metrics;
    this.refusalLingerMs = refusalLingerMs;
  }

  /** An invalid PROXY protocol header, or a UDP one. */
  static final class InvalidHeader extends Exception {
    InvalidHeader(String message) {
      super(message, null, false, false);
    }
  }

  /**
   * Whether {@code socket}'s peer may send a header: in {@code proxyTrustedPeers}, or any peer when none is listed
   * (a unix-socket peer is a local process: trusted). One that may not is closed now, counted, and holds no slot.
   */
  public boolean fromTrustedPeer(NetSocket socket) {
    SocketAddress peer = socket.remoteAddress();
    String ip = ConnectionLimits.addressKey(peer);
    if (trusted.isEmpty() || peer == null || peer.isDomainSocket() || trusted.contains(ip)) {
      return true;
    }
    socket.close();
    failed(HandshakeFailure.PROXY_UNTRUSTED, ip, "not in proxyTrustedPeers");
    return false;
  }

  /**
   * Reads the header of {@code socket}, which holds a slot with no address yet; {@code read} takes it once its
   * address has room in {@code maxConnectionsPerIp}. Otherwise the slot is given back and the socket closed.
   */
  public void begin(NetSocket socket, Read read) {
    String peer = ConnectionLimits.addressKey(socket.remoteAddress());
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
    read(socket).onComplete(header -> {
      Long pending = underWay.remove(socket);
      if (pending == null) {
        return;
      }
      ticker.cancel(pending);
      if (header.failed()) {
        limits.release(null);
        if (!closing && header.cause() instanceof InvalidHeader invalid) {
          failed(HandshakeFailure.PROXY_INVALID, peer, invalid.getMessage());
        }
        return;
      }
      SocketAddress client = header.result() != null ? header.result() : socket.remoteAddress();
      String ip = ConnectionLimits.addressKey(client);
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
  public void closeAll() {
    closing = true;
    for (Map.Entry<NetSocket, Long> waiting : List.copyOf(underWay.entrySet())) {
      underWay.remove(waiting.getKey());
      ticker.cancel(waiting.getValue());
      limits.release(null);
      waiting.getKey().close();
    }
  }

  /**
   * Reads {@code socket}'s header, keeping what follows it for the connection: the client address, or null for
   * {@code LOCAL} or {@code UNKNOWN}. Fails with {@link InvalidHeader}, closing the socket, or
   * {@link ClosedChannelException} if the client left first.
   */
  static Future<SocketAddress> read(NetSocket socket) {
    Channel channel = Sockets.channelOf(socket);
    Future<SocketAddress> header = read(channel);
    if (!header.isComplete()) {
      Sockets.readNettyBuffers(Sockets.internal(socket), Sockets.keepEarlyReads(channel));
    }
    return header;
  }

  /** Places the decoder and the reader of its message before Vert.x's handler; each removes itself when done. */
  static Future<SocketAddress> read(Channel channel) {
    if (!channel.isActive() || channel.pipeline().get("handler") == null) {
      return Future.failedFuture(new ClosedChannelException());
    }
    Promise<SocketAddress> header = Promise.promise();
    channel.pipeline().addBefore("handler", DECODER, new HAProxyMessageDecoder() {
      /** How many of the first bytes were checked, and which version's prefix they still fit. */
      private int seen;
      private boolean v1 = true;
      private boolean v2 = true;

      /**
       * Fails at once on first bytes that fit neither version's prefix, since the decoder alone would wait for 108
       * bytes or the timeout before rejecting a short non-header.
       */
      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (msg instanceof ByteBuf bytes) {
          for (int i = bytes.readerIndex(); i < bytes.writerIndex() && seen < V2.length; i++, seen++) {
            byte b = bytes.getByte(i);
            v1 &= seen >= V1.length || b == V1[seen];
            v2 &= b == V2[seen];
          }
          if (!v1 && !v2) {
            bytes.release();
            ctx.close();
            header.tryFail(new InvalidHeader("its first bytes are not a PROXY protocol header (v1 or v2)"));
            return;
          }
        }
        super.channelRead(ctx, msg);
      }
    });
    channel.pipeline().addBefore("handler", READER, new ChannelInboundHandlerAdapter() {
      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof HAProxyMessage message)) {
          ctx.fireChannelRead(msg);
          return;
        }
        try {
          ctx.pipeline().remove(this);
          if (message.proxiedProtocol().transportProtocol() == HAProxyProxiedProtocol.TransportProtocol.DGRAM) {
            ctx.close();
            header.tryFail(new InvalidHeader("a UDP (" + message.proxiedProtocol() + ") header on a TCP server"));
          } else {
            header.tryComplete(carried(message));
          }
        } finally {
          message.release();
        }
      }

      @Override
      public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof HAProxyProtocolException) {
          ctx.close();
          header.tryFail(new InvalidHeader(cause.getMessage() == null ? "not a PROXY protocol header" : cause.getMessage()));
        } else {
          ctx.fireExceptionCaught(cause);
        }
      }

      @Override
      public void channelInactive(ChannelHandlerContext ctx) {
        header.tryFail(new ClosedChannelException());
        ctx.fireChannelInactive();
      }
    });
    return header.future();
  }

  /** The client's address a header carries; none for a balancer's own check ({@code LOCAL}) or {@code UNKNOWN}. */
  private static SocketAddress carried(HAProxyMessage message) {
    if (message.command() == HAProxyCommand.LOCAL || message.sourceAddress() == null) {
      return null;
    }
    return switch (message.proxiedProtocol()) {
      case TCP4, TCP6 -> SocketAddress.inetSocketAddress(message.sourcePort(), message.sourceAddress());
      case UNIX_STREAM -> SocketAddress.domainSocketAddress(message.sourceAddress());
      default -> null;
    };
  }
}
