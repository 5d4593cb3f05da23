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
 * Sockets accepted and neither served nor turned away yet ({@code server.impl.WaitingNewcomers}), and the reads that
 * come before a socket is attached to its connection (a held socket's, or what Vert.x hands over at the end of a TLS
 * handshake): kept on the channel, handed to the connection first, released if the socket closes before.
 * <p>
 * A held socket reads nothing, what its client sends waits in the kernel, until {@link #readAgain}. A client that
 * half-closes while it waits makes io_uring read to the end anyway: what is read, and the end, are kept for the
 * connection. A reset while it waits closes the socket quietly; the decision finds it closed.
 */
public final class HeldNewcomers {

  /** Reads that came before the socket was attached to its connection. */
  private static final AttributeKey<List<ByteBuf>> EARLY_READS = AttributeKey.valueOf("frame-echo.early-reads");
  /** A held socket's client shut down its sending side before the socket was attached. */
  private static final AttributeKey<Boolean> INPUT_ENDED = AttributeKey.valueOf("frame-echo.input-ended-while-held");
  /** The pipeline handler that watches a held socket for the end of its input. */
  static final String HELD = "frame-echo-held";

  private HeldNewcomers() {
  }

  /** Holds {@code socket}: set from the connect handler, before Netty's first read. */
  public static void hold(NetSocket socket) {
    NetSocketInternal internal = Sockets.internal(socket);
    hold(internal.channelHandlerContext().channel());
    Sockets.readNettyBuffers(internal, keepEarlyReads(internal.channelHandlerContext().channel()));
    socket.exceptionHandler(e -> {
    });
  }

  /** The channel's part of {@link #hold(NetSocket)}: no reads, half-closure allowed, the end of its input watched for. */
  static void hold(Channel channel) {
    channel.config().setAutoRead(false);
    channel.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
    // Now, while the channel is registered: after an input shut down, the change would fail and Netty close the socket.
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

  /** A held socket is served or turned away now: it reads again, unless its client has already shut its side. */
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

  /** Whether a socket not attached yet is still open (a held socket's client may have gone). */
  public static boolean isOpen(NetSocket socket) {
    return Sockets.channelOf(socket).isOpen();
  }

  /** The client shut its side while the socket was held. */
  static boolean inputEnded(Channel channel) {
    return channel.hasAttr(INPUT_ENDED) && Boolean.TRUE.equals(channel.attr(INPUT_ENDED).get());
  }

  /**
   * What Vert.x reads before a connection is attached goes to a list the connection gets first
   * ({@link #deliverEarlyReads}); released if the socket closes before. Returns where to send those reads.
   */
  static Consumer<ByteBuf> keepEarlyReads(Channel channel) {
    List<ByteBuf> early = new ArrayList<>();
    channel.attr(EARLY_READS).set(early);
    channel.closeFuture().addListener(closed -> releaseEarlyReads(channel));
    return early::add;
  }

  /** Drops what was kept, released. */
  static void releaseEarlyReads(Channel channel) {
    List<ByteBuf> left = channel.attr(EARLY_READS).getAndSet(null);
    if (left != null) {
      left.forEach(ByteBuf::release);
    }
  }

  /**
   * Hands {@code events} what was read before the socket was attached, then the end of the input if its client shut
   * its side while the socket was held: once, after the connection has started, before anything else is read.
   */
  static void deliverEarlyReads(Channel channel, ConnectionSocket.Events events) {
    List<ByteBuf> early = channel.hasAttr(EARLY_READS) ? channel.attr(EARLY_READS).getAndSet(null) : null;
    if (early != null) {
      early.forEach(events::bytes);
    }
    if (inputEnded(channel)) {
      // The client shut its side while the socket waited for a slot: it is told now, after what it sent.
      events.inputEnded();
    }
  }
}
