package io.frameecho.server.impl.netty;

import io.frameecho.server.impl.connection.AcceptedSocket;
import io.frameecho.server.impl.connection.ConnectionSocket;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.ScheduledFuture;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.SocketAddress;

import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * One connection's {@link ConnectionSocket}, reaching under Vert.x's public {@link NetSocket} API where that API cannot
 * do the job: zero-copy Netty buffer reads and writes, demand through {@code autoRead} (a paused Vert.x socket keeps
 * queueing reads), byte-based writability, half-closure, a close that does not flush, and a lingering close (a plain
 * close with unread input sends a reset). On the socket's event loop.
 */
public final class ChannelSocket implements ConnectionSocket {

  /** The pipeline handler that watches for writability and the end of the input. */
  static final String WATCH = "frame-echo-watch";

  private final NetSocket socket;
  private final NetSocketInternal internal;
  private final Channel channel;
  /** The client shut down its sending side. */
  private boolean inputShutdown;
  /** The FIN is out after the last response; reads are discarded until the client closes. */
  private boolean lingering;
  /** The channel's {@code ALLOW_HALF_CLOSURE} as last set here. */
  private boolean halfClosureAllowed;
  /** Where a shutdown's close may hand the socket; null when no handover is configured. */
  private MoveTo moveTo;
  /** The socket moved to the successor; only this process's descriptor was closed. */
  private boolean handedOver;

  private ChannelSocket(NetSocket socket) {
    this.socket = socket;
    this.internal = Sockets.internal(socket);
    this.channel = internal.channelHandlerContext().channel();
  }

  /** Wraps an accepted socket, unwritable at {@code writeQueueMaxSize} queued bytes and writable again at half. */
  public static AcceptedSocket accepted(NetSocket socket, Context context, int writeQueueMaxSize) {
    return accepted(socket, null, context, writeQueueMaxSize, Runnable::run, null);
  }

  /**
   * As {@link #accepted(NetSocket, Context, int)}, with the client at {@code client} (the address a PROXY protocol
   * header carried; null: the socket's peer), shutdown events paced by {@code shutdownPacing} and a close for shutdown
   * handed over to {@code successor}'s process when possible (null: no handover).
   */
  public static AcceptedSocket accepted(NetSocket socket, SocketAddress client, Context context, int writeQueueMaxSize,
                                        Consumer<Runnable> shutdownPacing, Supplier<Handover.Successor> successor) {
    return new AcceptedSocket() {
      @Override
      public SocketAddress remoteAddress() {
        return client != null ? client : socket.remoteAddress();
      }

      @Override
      public ConnectionSocket attach(Events events, IntSupplier readCap) {
        ChannelSocket attached = ChannelSocket.attach(socket, context, writeQueueMaxSize, events, shutdownPacing);
        CappedReads.capFor(attached.channel, readCap, events);
        if (successor != null) {
          attached.moveTo = new MoveTo(successor, events);
        }
        return attached;
      }

      @Override
      public void deliverEarlyReads(Events events) {
        Sockets.deliverEarlyReads(Sockets.channelOf(socket), events);
      }
    };
  }

  /** Wires {@code socket}'s events to {@code events}; once, on the socket's event loop. */
  static ChannelSocket attach(NetSocket socket, Context context, int writeQueueMaxSize, Events events, Consumer<Runnable> shutdownPacing) {
    ChannelSocket attached = new ChannelSocket(socket);
    attached.inputShutdown = Sockets.inputEnded(attached.channel);
    // Setting the water marks costs an object per connection; skip it when Netty's defaults already match.
    ChannelConfig config = attached.channel.config();
    if (config.getWriteBufferHighWaterMark() != writeQueueMaxSize || config.getWriteBufferLowWaterMark() != writeQueueMaxSize / 2) {
      socket.setWriteQueueMaxSize(writeQueueMaxSize);
    }
    attached.allowHalfClosure(true);
    EpollProbe.FOUND.forServer(attached.channel);
    Watch watch = attached.new Watch(context, events);
    attached.channel.pipeline().addBefore("handler", WATCH, watch);
    socket.drainHandler(v -> events.writable());
    socket.closeHandler(v -> events.closed());
    socket.shutdownHandler(timeout -> shutdownPacing.accept(events::shutdownRequested));
    socket.exceptionHandler(events::failed);
    Sockets.readNettyBuffers(attached.internal, bytes -> {
      attached.allowHalfClosure(true);
      events.bytes(bytes);
    });
    return attached;
  }

  private void allowHalfClosure(boolean allowed) {
    if (halfClosureAllowed != allowed) {
      halfClosureAllowed = allowed;
      channel.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, allowed);
    }
  }

  /** The successor supplier and the connection that says whether its socket may move. */
  private record MoveTo(Supplier<Handover.Successor> successor, Events events) {
  }

  /** The end of the input and writability, told to the connection on its context. */
  final class Watch extends ChannelInboundHandlerAdapter {

    private final Context context;
    private final Events events;
    private final boolean onChannelLoop;

    Watch(Context context, Events events) {
      this.context = context;
      this.events = events;
      this.onChannelLoop = context.isEventLoopContext() && channel.eventLoop().inEventLoop();
    }

    /**
     * Stay half-open at an end of input only while the connection owes the client responses; owing nothing, close
     * there as plain Netty does. Transports report an end of input after the reads before it, so this is safe.
     */
    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
      if (halfClosureAllowed && onChannelLoop && !inputShutdown && !lingering && events.owesNothing()) {
        allowHalfClosure(false);
      }
      super.channelReadComplete(ctx);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
      if (evt instanceof ChannelInputShutdownEvent) {
        inputShutdown = true;
        EpollProbe.FOUND.edgeTriggered(ctx.channel());
        if (lingering) {
          closeNow();
        } else {
          context.runOnContext(v -> events.inputEnded());
        }
      }
      super.userEventTriggered(ctx, evt);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
      if (ctx.channel().isWritable()) {
        context.runOnContext(v -> events.writable());
      }
      super.channelWritabilityChanged(ctx);
    }
  }

  /** Refuses a socket over a limit with a FIN, discarding reads for up to {@code lingerMs} so no reset is sent. */
  public static void refuse(NetSocket socket, Context context, long lingerMs) {
    attach(socket, context, Integer.MAX_VALUE, new Events() {
      @Override
      public void bytes(ByteBuf bytes) {
        bytes.release();
      }

      @Override
      public void inputEnded() {
      }

      @Override
      public void writable() {
      }

      @Override
      public void failed(Throwable error) {
      }

      @Override
      public void shutdownRequested() {
      }

      @Override
      public void closed() {
      }
    }, Runnable::run).closeLingering(lingerMs);
  }

  @Override
  public void reading(boolean on) {
    // Re-enabling reads after input shutdown fails on epoll, and Netty then closes with responses unwritten.
    if (on && inputShutdown) {
      return;
    }
    channel.config().setAutoRead(on);
  }

  @Override
  public boolean writeQueueFull() {
    return !channel.isWritable() || socket.writeQueueFull();
  }

  /** Bytes queued and not yet taken by the kernel; falls while the client reads, however slowly. */
  @Override
  public long pendingWriteBytes() {
    return pendingWriteBytes(channel);
  }

  static long pendingWriteBytes(Channel channel) {
    ChannelOutboundBuffer outbound = channel.unsafe().outboundBuffer();
    return outbound == null ? 0 : outbound.totalPendingWriteBytes() - outbound.currentProgress();
  }

  @Override
  public Future<Void> write(ByteBuf bytes) {
    return internal.writeMessage(bytes);
  }

  /** Writes through Vert.x's public API. */
  @Override
  public Future<Void> write(Buffer bytes) {
    return socket.write(bytes);
  }

  /**
   * Once the queued responses are written, sends a FIN (after TLS close_notify) and discards reads until the client
   * closes or {@code lingerMs} pass, because a reset would discard responses the client has not read yet. With a
   * successor, a socket its connection allows to move ({@link Events#handOverAllowed}) is handed over instead.
   */
  @Override
  public void closeLingering(long lingerMs) {
    finThenLinger(lingerMs, false);
  }

  /** As {@link #closeLingering}, but with {@code lingerMs} 0 it still reads once after the FIN to avoid a reset. */
  @Override
  public void closeOwingNothing(long lingerMs) {
    finThenLinger(lingerMs, true);
  }

  private void finThenLinger(long lingerMs, boolean afterFin) {
    internal.writeMessage(Unpooled.EMPTY_BUFFER).onComplete(written -> {
      if (moveTo == null || written.failed()) {
        fin(written.succeeded(), lingerMs, afterFin);
        return;
      }
      // Netty counts a completed write as pending until the next task, so ask about moving there.
      channel.eventLoop().execute(() -> moveOrFin(lingerMs, afterFin));
    });
  }

  /** Hands the socket to the successor if it may move, else sends the FIN and lingers. */
  private void moveOrFin(long lingerMs, boolean afterFin) {
    Handover.Successor to = inputShutdown ? null : moveTo.successor.get();
    if (to != null && moveTo.events.handOverAllowed() && Handover.movable(channel)) {
      to.handOver(channel, moved -> {
        if (moved) {
          handedOver = true;
          closeNow();
        } else {
          fin(true, lingerMs, afterFin);
        }
      });
      return;
    }
    fin(true, lingerMs, afterFin);
  }

  private void fin(boolean written, long lingerMs, boolean afterFin) {
    if (!written || (lingerMs == 0 && !afterFin) || inputShutdown || !(channel instanceof DuplexChannel duplex)) {
      closeNow();
      return;
    }
    SslHandler tls = channel.pipeline().get(SslHandler.class);
    ChannelFuture closeNotify = tls == null ? channel.newSucceededFuture() : tls.closeOutbound();
    closeNotify.addListener(sent -> duplex.shutdownOutput().addListener(fin -> {
      if (!fin.isSuccess() || inputShutdown) {
        closeNow();
        return;
      }
      lingering = true;
      reading(true);
      // Netty runs due scheduled tasks after the IO pass, so bytes already arrived are read before this close.
      ScheduledFuture<?> deadline = channel.eventLoop().schedule(this::closeNow, lingerMs, TimeUnit.MILLISECONDS);
      channel.closeFuture().addListener(closed -> deadline.cancel(false));
    }));
  }

  @Override
  public boolean handedOver() {
    return handedOver;
  }

  @Override
  public boolean lingering() {
    return lingering;
  }

  @Override
  public boolean resetByPeer() {
    return TcpInfo.state(channel) == TcpInfo.TCP_CLOSE;
  }

  @Override
  public long msSinceDataSent() {
    return TcpInfo.msSinceDataSent(channel);
  }

  @Override
  public boolean clientClosed() {
    int state = TcpInfo.state(channel);
    return state == TcpInfo.TCP_CLOSE_WAIT || state == TcpInfo.TCP_CLOSE;
  }

  /**
   * Closes at once, dropping queued writes. Goes through Vert.x's handler context, since a close from the pipeline tail
   * would become a flushing close, which a non-reading peer blocks.
   */
  @Override
  public void closeNow() {
    internal.channelHandlerContext().close();
  }
}
