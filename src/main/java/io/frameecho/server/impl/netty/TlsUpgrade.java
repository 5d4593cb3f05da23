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
 * TLS as a server-side upgrade after accept, so a socket counts against the limits from accept rather than from the
 * end of its handshake. Reading stays off until Vert.x's TLS handler is in the pipeline, because some Vert.x versions
 * read while building the TLS context and lose the ClientHello. On the socket's event loop.
 */
public final class TlsUpgrade {

  /** Vert.x's pipeline name for its TLS (or SNI) handler. */
  static final String TLS_HANDLER = "ssl";
  /** Pipeline name of the handler holding reads until the TLS handler is placed. */
  static final String GATE = "frame-echo-tls-gate";

  private TlsUpgrade() {
  }

  /**
   * Upgrades an accepted socket to TLS, keeping early decrypted reads ({@link Sockets#keepEarlyReads}); a failure closes it.
   * Fails rather than hangs when Vert.x cannot create its TLS handler, whose own future then never completes.
   */
  public static Future<Void> upgradeToTls(NetSocket socket, ServerSSLOptions options) {
    NetSocketInternal internal = Sockets.internal(socket);
    Channel channel = internal.channelHandlerContext().channel();
    Promise<Void> upgraded = Promise.promise();
    // Bytes read while held, before any TLS handler, are records nobody will decrypt: drop them.
    Sockets.releaseEarlyReads(channel);
    Sockets.readNettyBuffers(internal, Sockets.keepEarlyReads(channel));
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
   * Turns reading off until the TLS handler is placed. Vert.x places it from the listener of one write; after that
   * write, reading resumes if the handler is there, and {@code upgraded} fails on {@code context} if it is not.
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

  /** Classifies a failed {@link #upgradeToTls} for the handshake-failure counts. */
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
