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
 * One connection's socket, the poll loop's view of it (the book's {@code handle_read} events): the
 * {@link ConnectionSocket} a connection talks to, which tells it {@link ConnectionSocket.Events}. What it reaches
 * under Vert.x's public {@link NetSocket} API for, and why the public API cannot do it (src/docs/EMBEDDING.md, "The
 * internal hooks", says the same for users):
 * <ul>
 *   <li><b>reads and writes of Netty buffers</b> ({@link Sockets}): no copy of a read, none of a response that is
 *   a slice of one; writes through Vert.x's own write queue ({@code writeMessage});</li>
 *   <li><b>demand</b> (the channel's {@code autoRead}): paused through the socket, Vert.x keeps reading into a queue
 *   of its own, which it does not release when the connection closes;</li>
 *   <li><b>byte-based writability</b> (the channel's water marks): Vert.x's {@code writeQueueFull()} counts messages,
 *   whatever their size; and the bytes still queued, to tell a slow reader from a stalled one;</li>
 *   <li><b>half-closure</b> ({@code ALLOW_HALF_CLOSURE} and the input-shutdown event): Netty otherwise closes a
 *   connection whose client shut down its sending side, before its responses are written;</li>
 *   <li><b>a close that does not flush</b> (the Vert.x handler's own context): a client that does not read would
 *   hold a flushing close open;</li>
 *   <li><b>a lingering close</b> (a FIN through the channel's {@code shutdownOutput}, then reads): Vert.x closes a
 *   socket with unread input, which sends a reset; Vert.x's {@code NetSocket.close()}, which differs between the
 *   lines, is not used.</li>
 * </ul>
 * The channel work is plain Netty, placed once in the pipeline before Vert.x's handler. On the socket's event loop.
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
  /** The channel's {@code ALLOW_HALF_CLOSURE}, as this socket last set it ({@link Watch#channelReadComplete}). */
  private boolean halfClosureAllowed;
  /** Where a shutdown's close may hand the socket instead, and who allows it; null when no handover is configured. */
  private MoveTo moveTo;
  /** The socket moved to the successor: this process closed its own descriptor only. */
  private boolean handedOver;

  private ChannelSocket(NetSocket socket) {
    this.socket = socket;
    this.internal = Sockets.internal(socket);
    this.channel = internal.channelHandlerContext().channel();
  }

  /**
   * {@code socket}, accepted, to be attached to its connection on {@code context}'s event loop (which the caller runs
   * on): {@code writeQueueMaxSize} bytes queued make it unwritable; half of it, writable again.
   */
  public static AcceptedSocket accepted(NetSocket socket, Context context, int writeQueueMaxSize) {
    return accepted(socket, context, writeQueueMaxSize, Runnable::run, null);
  }

  /**
   * As {@link #accepted(NetSocket, Context, int)}; Vert.x's shutdown of the socket reaches its connection through
   * {@code shutdownPacing}, which runs it now or in a later turn of the event loop; a close for shutdown that finds a
   * process in {@code successor} (null: none is configured) hands the socket over to it when it can move ({@link
   * #closeLingering}).
   */
  public static AcceptedSocket accepted(NetSocket socket, Context context, int writeQueueMaxSize, Consumer<Runnable> shutdownPacing,
                                        Supplier<Successor> successor) {
    return new AcceptedSocket() {
      @Override
      public SocketAddress remoteAddress() {
        return socket.remoteAddress();
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
        HeldNewcomers.deliverEarlyReads(Sockets.channelOf(socket), events);
      }
    };
  }

  /** Wires {@code socket}'s events to {@code events}; once, on the socket's event loop. */
  static ChannelSocket attach(NetSocket socket, Context context, int writeQueueMaxSize, Events events, Consumer<Runnable> shutdownPacing) {
    ChannelSocket attached = new ChannelSocket(socket);
    attached.inputShutdown = HeldNewcomers.inputEnded(attached.channel);
    // Vert.x makes this the channel's water marks: unwritable above it, writable again below half of it. Netty's own
    // (64 KiB, 32 KiB) are the default's: then nothing is set, and no object kept per connection.
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

  /** The process found at shutdown, if any, and the connection that says whether its socket may move there. */
  private record MoveTo(Supplier<Successor> successor, Events events) {
  }

  /** The end of the input and writability, told to the connection on its context. */
  final class Watch extends ChannelInboundHandlerAdapter {

    private final Context context;
    private final Events events;
    /** The connection runs on this channel's event loop, so its state can be read from the pipeline's events. */
    private final boolean onChannelLoop;

    Watch(Context context, Events events) {
      this.context = context;
      this.events = events;
      this.onChannelLoop = context.isEventLoopContext() && channel.eventLoop().inEventLoop();
    }

    /**
     * The half-closure rule: a socket stays half-open at an end of input only while its connection owes the client
     * something (from its first byte read until a read completes with nothing owed); owing nothing, it closes there, as
     * a plain Netty server does: no input shut down, no interest-set change, no task. Every transport tells an end of
     * input after the reads before it, so a request read just before its end has set half-closure again. Netty's epoll
     * and NIO transports fire this before they act on an end of input read in the same pass.
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
          // The client has read to our FIN and closed its side: both sides are done.
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

  /**
   * Turns away a socket that was accepted over a limit: with a FIN, after reading and discarding what the
   * client already sent for up to {@code lingerMs} (a plain close with unread input would send a reset).
   */
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
    // Nothing is left to read from an input the client has shut down: turning reading on again then fails on
    // epoll (epoll_ctl: no such file), and Netty closes the channel, with the responses not yet written.
    if (on && inputShutdown) {
      return;
    }
    channel.config().setAutoRead(on);
  }

  @Override
  public boolean writeQueueFull() {
    return !channel.isWritable() || socket.writeQueueFull();
  }

  /**
   * Bytes queued in the channel and not yet taken by the kernel: falls while the client reads, however
   * slowly. Netty counts a message as pending until it is written whole, so the part of the current one
   * already written is taken off.
   */
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

  /** Through Vert.x's public API. */
  @Override
  public Future<Void> write(Buffer bytes) {
    return socket.write(bytes);
  }

  /**
   * A lingering close, as nginx does it for HTTP: once every queued response is written, a FIN (after TLS's
   * close_notify); then the socket reads what the client still sends, which the connection discards,
   * until the client closes its side or {@code lingerMs} have passed; then it closes. Closing at once with
   * unread input would send a reset, and a reset makes the client's kernel throw away the responses the
   * client has not read yet. With {@code lingerMs} 0, it closes once the responses are written.
   * <p>
   * With a successor process (a restart with handover), a close its connection allows to move ({@link
   * Events#handOverAllowed}: shutdown's, nothing owed, nothing read and dropped) moves the socket there instead once
   * the responses are written, with no FIN: the client sees no close. One that cannot move (TLS, its input or output
   * shut down, the successor gone) closes as above.
   */
  @Override
  public void closeLingering(long lingerMs) {
    finThenLinger(lingerMs, false);
  }

  /**
   * As {@link #closeLingering}; with {@code lingerMs} 0 the socket closes on the event loop's next turn after the
   * FIN, what the client had already sent read (and discarded) in that turn, so the close sends no reset.
   */
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
      // Netty completes a write before it takes the write off the channel's pending bytes: whether the socket can
      // move is asked in the loop's next task, once nothing written is counted as pending.
      channel.eventLoop().execute(() -> moveOrFin(lingerMs, afterFin));
    });
  }

  /** Every response written: hands the socket to the successor if it may move there, else the FIN and the linger. */
  private void moveOrFin(long lingerMs, boolean afterFin) {
    Successor to = inputShutdown ? null : moveTo.successor.get();
    if (to != null && moveTo.events.handOverAllowed() && Successor.movable(channel)) {
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
      // A scheduled task runs after the event loop's next look at its sockets (Netty moves due scheduled tasks
      // to its queue only before a batch of tasks, after the IO pass): bytes that had arrived are read first.
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
   * Closes at once, dropping whatever is still queued: for a peer that does not read, or a broken socket.
   * From Vert.x's own handler context: a close from the channel's tail would pass through that handler,
   * which turns it into a close after flushing, the very thing a peer that does not read blocks.
   */
  @Override
  public void closeNow() {
    internal.channelHandlerContext().close();
  }
}
