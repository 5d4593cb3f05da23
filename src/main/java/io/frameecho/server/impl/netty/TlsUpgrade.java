package io.frameecho.server.impl.netty;

import io.frameecho.server.HandshakeFailure;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.ServerSSLOptions;

import javax.net.ssl.SSLException;

/**
 * TLS as a server-side upgrade at accept, so that a socket counts against the limits from accept, not from the end
 * of its handshake. Vert.x 5.0 reads while it builds a TLS context (the first handshake with given key material) and
 * queues the ClientHello where the TLS handler never sees it (fixed in 5.1.3): the channel does not read until the
 * TLS handler is in the pipeline. On the socket's event loop.
 */
public final class TlsUpgrade {

  /** The name Vert.x gives its TLS handler in the pipeline (5.0 to 5.2; an SNI handler until the ClientHello). */
  static final String TLS_HANDLER = "ssl";
  /** The pipeline handler that holds reading until Vert.x has placed its TLS handler. */
  static final String GATE = "frame-echo-tls-gate";

  private TlsUpgrade() {
  }

  /**
   * The server side of a TLS handshake on a socket accepted as plain TCP, with {@code options}; nothing of the
   * frame protocol runs until it succeeds. The socket reads nothing until the TLS handler is in place; what is
   * read, decrypted, after the handshake and before the socket is attached is kept for the connection
   * ({@link HeldNewcomers}). If the upgrade fails, the socket is closed. Call on the socket's context; the future
   * completes there.
   * <p>
   * Vert.x (5.0 to 5.2) creates its TLS handler in the listener of a write; if that throws (a cipher suite the engine
   * does not know), Netty logs the exception, the handler is never placed and Vert.x's future never completes: the
   * client would wait for an answer for ever. Here that upgrade fails and the socket closes.
   */
  public static Future<Void> upgradeToTls(NetSocket socket, ServerSSLOptions options) {
    NetSocketInternal internal = Sockets.internal(socket);
    Channel channel = internal.channelHandlerContext().channel();
    Promise<Void> upgraded = Promise.promise();
    // Bytes a held socket read before the TLS handler existed (its client half-closed while it waited for a slot) are
    // TLS records no handler will see: dropped, and that handshake fails or times out.
    HeldNewcomers.releaseEarlyReads(channel);
    Sockets.readNettyBuffers(internal, HeldNewcomers.keepEarlyReads(channel));
    gateReading(channel, Vertx.currentContext(), upgraded);
    socket.upgradeToSsl(options).onComplete(upgrade -> {
      if (upgrade.succeeded()) {
        upgraded.tryComplete();
      } else {
        upgraded.tryFail(upgrade.cause());
      }
    });
    return upgraded.future().onFailure(e -> internal.channelHandlerContext().close());
  }

  /**
   * Turns reading off until the TLS handler is in place. Vert.x writes once (an empty buffer) before it places the TLS
   * handler (named {@value #TLS_HANDLER} from 5.0 to 5.2), from that write's listener: once that has run, reading
   * starts again (5.1.3 and later turn it back on themselves, in the same listener); a write that went out with no
   * handler placed after it means that listener failed, and {@code upgraded} fails on {@code context}.
   */
  static void gateReading(Channel channel, Context context, Promise<Void> upgraded) {
    channel.config().setAutoRead(false);
    channel.pipeline().addFirst(GATE, new ChannelOutboundHandlerAdapter() {
      @Override
      public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        ChannelPromise written = promise.unvoid();
        Channel ch = ctx.channel();
        written.addListener(done -> ch.eventLoop().execute(() -> {
          if (ch.pipeline().get(TLS_HANDLER) != null) {
            ch.config().setAutoRead(true);
          } else if (done.isSuccess()) {
            context.runOnContext(v -> upgraded.tryFail(new SSLException(ch.isActive()
              ? "Vert.x could not create its TLS handler for these options (Netty logged why, \"An exception was thrown by ...\")"
              : "the connection closed before its TLS handler was in place")));
          }
        }));
        ctx.write(msg, written);
        ctx.pipeline().remove(this);
      }
    });
  }

  /** Why a TLS upgrade failed ({@link #upgradeToTls}'s cause), as operators count it. */
  public static HandshakeFailure handshakeFailure(Throwable error) {
    for (Throwable e = error; e != null; e = e.getCause() == e ? null : e.getCause()) {
      if (e instanceof SslHandshakeTimeoutException) {
        return HandshakeFailure.TIMEOUT;
      }
      if (e instanceof NotSslRecordException) {
        return HandshakeFailure.NOT_TLS;
      }
    }
    return HandshakeFailure.FAILED;
  }
}
