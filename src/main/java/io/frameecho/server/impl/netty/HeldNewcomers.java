package io.frameecho.server.impl.netty;

import io.frameecho.server.impl.connection.ConnectionSocket;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.util.AttributeKey;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetSocket;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Accepted sockets not yet served or refused, and reads that arrive before a socket is attached to its connection
 * (while held, or at the end of a TLS handshake): kept on the channel, delivered first, released if it closes.
 * <p>
 * A held socket does not read until {@link #readAgain}. An end of input while held (io_uring reads to it anyway) is
 * kept for the connection; a reset closes the socket quietly.
 */
public final class HeldNewcomers {

  /** Reads before the socket was attached. */
  private static final AttributeKey<List<ByteBuf>> EARLY_READS = AttributeKey.valueOf("frame-echo.early-reads");
  /** The client shut down its sending side while held. */
  private static final AttributeKey<Boolean> INPUT_ENDED = AttributeKey.valueOf("frame-echo.input-ended-while-held");
  /** Pipeline name of the handler watching a held socket's input. */
  static final String HELD = "frame-echo-held";

  private HeldNewcomers() {
  }

  /** Holds {@code socket}; call from the connect handler, before Netty's first read. */
  public static void hold(NetSocket socket) {
    NetSocketInternal internal = Sockets.internal(socket);
    hold(internal.channelHandlerContext().channel());
    Sockets.readNettyBuffers(internal, keepEarlyReads(internal.channelHandlerContext().channel()));
    socket.exceptionHandler(e -> {
    });
  }

  /** Holds the channel: no reads, half-closure allowed, end of input watched. */
  static void hold(Channel channel) {
    channel.config().setAutoRead(false);
    channel.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
    // Must run while registered: after an input shutdown the change would fail and Netty would close the socket.
    EpollProbe.FOUND.forServer(channel);
    channel.pipeline().addBefore("handler", HELD, new ChannelInboundHandlerAdapter() {
      @Override
      public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof ChannelInputShutdownEvent) {
          ctx.channel().attr(INPUT_ENDED).set(Boolean.TRUE);
        }
        super.userEventTriggered(ctx, evt);
      }
    });
  }

  /** Releases a held socket once it is served or refused; it reads again unless its input has ended. */
  public static void readAgain(NetSocket socket) {
    readAgain(Sockets.channelOf(socket));
  }

  static void readAgain(Channel channel) {
    if (channel.pipeline().get(HELD) != null) {
      channel.pipeline().remove(HELD);
    }
    if (!inputEnded(channel)) {
      channel.config().setAutoRead(true);
    }
  }

  /** Whether an unattached socket is still open. */
  public static boolean isOpen(NetSocket socket) {
    return Sockets.channelOf(socket).isOpen();
  }

  /** Whether the client shut its side while held. */
  static boolean inputEnded(Channel channel) {
    return channel.hasAttr(INPUT_ENDED) && Boolean.TRUE.equals(channel.attr(INPUT_ENDED).get());
  }

  /** Returns a sink keeping reads for {@link #deliverEarlyReads}, released if the socket closes first. */
  static Consumer<ByteBuf> keepEarlyReads(Channel channel) {
    List<ByteBuf> early = new ArrayList<>();
    channel.attr(EARLY_READS).set(early);
    channel.closeFuture().addListener(closed -> releaseEarlyReads(channel));
    return early::add;
  }

  /** Releases the kept reads. */
  static void releaseEarlyReads(Channel channel) {
    List<ByteBuf> left = channel.attr(EARLY_READS).getAndSet(null);
    if (left != null) {
      left.forEach(ByteBuf::release);
    }
  }

  /** Delivers the early reads, then any end of input seen while held; once, before anything else is read. */
  static void deliverEarlyReads(Channel channel, ConnectionSocket.Events events) {
    List<ByteBuf> early = channel.hasAttr(EARLY_READS) ? channel.attr(EARLY_READS).getAndSet(null) : null;
    if (early != null) {
      early.forEach(events::bytes);
    }
    if (inputEnded(channel)) {
      events.inputEnded();
    }
  }
}
