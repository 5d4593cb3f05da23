package io.frameecho.server.impl.netty;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.haproxy.HAProxyCommand;
import io.netty.handler.codec.haproxy.HAProxyMessage;
import io.netty.handler.codec.haproxy.HAProxyMessageDecoder;
import io.netty.handler.codec.haproxy.HAProxyProtocolException;
import io.netty.handler.codec.haproxy.HAProxyProxiedProtocol;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.SocketAddress;

import java.nio.channels.ClosedChannelException;

/**
 * Reads the PROXY protocol header (v1 or v2) on a socket already accepted and counted, so that a socket awaiting its
 * header is within the limits, which Vert.x's own {@code useProxyProtocol} would not give. Bytes after the header are
 * kept for the connection ({@link HeldNewcomers}). On the socket's event loop; needs {@code netty-codec-haproxy}.
 */
public final class ProxyHeader {

  static final String GUARD = "frame-echo-proxy-guard";
  static final String DECODER = "frame-echo-proxy-decoder";
  /** The prefixes of a v1 and a v2 header. */
  private static final byte[] V1 = "PROXY ".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  private static final byte[] V2 = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};
  static final String READER = "frame-echo-proxy-reader";

  private ProxyHeader() {
  }

  /** An invalid PROXY protocol header, or a UDP one. */
  public static final class InvalidHeader extends Exception {
    InvalidHeader(String message) {
      super(message, null, false, false);
    }
  }

  /**
   * Reads {@code socket}'s header: the client address, or null for {@code LOCAL} or {@code UNKNOWN}. Fails with
   * {@link InvalidHeader}, closing the socket, or {@link ClosedChannelException} if the client left first.
   */
  public static Future<SocketAddress> read(NetSocket socket) {
    NetSocketInternal internal = Sockets.internal(socket);
    Channel channel = internal.channelHandlerContext().channel();
    Future<SocketAddress> header = read(channel);
    if (!header.isComplete()) {
      Sockets.readNettyBuffers(internal, HeldNewcomers.keepEarlyReads(channel));
    }
    return header;
  }

  /** Installs the header handlers before Vert.x's. */
  static Future<SocketAddress> read(Channel channel) {
    if (!channel.isActive() || channel.pipeline().get("handler") == null) {
      return Future.failedFuture(new ClosedChannelException());
    }
    Promise<SocketAddress> header = Promise.promise();
    channel.pipeline().addBefore("handler", GUARD, new Guard(header));
    channel.pipeline().addBefore("handler", DECODER, new HAProxyMessageDecoder());
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

  /**
   * Fails fast on first bytes that fit neither version's prefix, since Netty's decoder would wait for 108 bytes or the
   * timeout before rejecting a short non-header.
   */
  private static final class Guard extends ChannelInboundHandlerAdapter {
    private final Promise<SocketAddress> header;
    private int seen;
    private boolean v1 = true;
    private boolean v2 = true;

    Guard(Promise<SocketAddress> header) {
      this.header = header;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof io.netty.buffer.ByteBuf bytes) {
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
        if (seen >= V2.length) {
          ctx.pipeline().remove(this);
        }
      }
      ctx.fireChannelRead(msg);
    }
  }

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
