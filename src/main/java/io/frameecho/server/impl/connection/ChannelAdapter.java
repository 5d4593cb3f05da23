package io.frameecho.server.impl.connection;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.ReferenceCountUtil;
import io.frameecho.server.HandshakeFailure;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.ServerSSLOptions;

import javax.net.ssl.SSLException;
import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.IntSupplier;

/**
 * The one room that reaches under Vert.x's public {@link NetSocket} API: the poll loop's view of one
 * socket, the book's {@code handle_read} events. It tells its connection {@link Events}, and is the
 * connection's {@link ConnectionSocket}.
 * <p>
 * What it reaches for, and why the public API cannot do it (src/docs/EMBEDDING.md, "The internal hooks"
 * says the same for users):
 * <ul>
 *   <li><b>reads as Netty buffers</b> ({@code messageHandler}): the public {@code handler(Buffer)} copies
 *   every read into a heap buffer; frames are sliced out of Netty's own buffer instead. Between Vert.x 5.0
 *   and 5.1 this method moved to a new super-interface with another return type, so it is looked up once
 *   by name ({@link #hooks()}); where it is missing, reads come through the public handler, copied;</li>
 *   <li><b>writes of Netty buffers</b> ({@code writeMessage}): a response that is a slice of a read goes
 *   back without a copy;</li>
 *   <li><b>demand</b> (the channel's {@code autoRead}): paused through the socket, Vert.x keeps reading into
 *   a queue of its own, which it does not release when the connection closes;</li>
 *   <li><b>byte-based writability</b> (the channel's water marks): Vert.x's {@code writeQueueFull()}
 *   counts messages, whatever their size; and the bytes still queued, to tell a slow reader from a
 *   stalled one;</li>
 *   <li><b>half-closure</b> ({@code ALLOW_HALF_CLOSURE} and the input-shutdown event): Netty otherwise
 *   closes a connection whose client shut down its sending side, before its responses are written;</li>
 *   <li><b>a close that does not flush</b> (the Vert.x handler's own context): a client that does not read
 *   would hold a flushing close open;</li>
 *   <li><b>a lingering close</b> (a FIN through the channel's {@code shutdownOutput}, then reads): Vert.x
 *   closes a socket with unread input, which sends a reset;</li>
 *   <li><b>the listener</b> ({@link Listener}, the accepted channel's parent, and the acceptor event loops):
 *   to stop accepting before Vert.x's shutdown, and to complete a shutdown only once the port is unbound.</li>
 * </ul>
 * {@code channelHandlerContext()} and {@code writeMessage} kept their form from Vert.x 5.0 to 5.2; the
 * channel work is plain Netty, placed once in the pipeline before Vert.x's handler (as vertx-mqtt does).
 * One public method changed its type between the lines too ({@code shutdownHandler}): see
 * {@link #anyArgument}. The close is Netty's too: {@link #closeLingering} (a FIN, then reading until the
 * client is done) and {@link #closeNow}, so that Vert.x's {@code NetSocket.close()}, which differs between
 * the lines, is not used.
 * <p>
 * <b>TLS</b> is a server-side upgrade at accept ({@link #upgradeToTls}), so that a socket counts against the
 * limits from accept, not from the end of its handshake. Vert.x 5.0 reads while it builds a TLS context (the first
 * handshake with given key material) and queues the ClientHello where the TLS handler never sees it (fixed in
 * 5.1.3): the channel does not read until the TLS handler is in the pipeline.
 */
public final class ChannelAdapter implements ConnectionSocket {

  /** What the socket tells its connection; all on the connection's event loop, inside its context. */
  interface Events {

    /** Bytes read; the listener owns {@code bytes} and releases it. */
    void bytes(ByteBuf bytes);

    /** The client shut down its sending side (or the read side ended). */
    void inputEnded();

    /** The write queue went below its low-water mark. */
    void writable();

    /** An IO error (a reset, a TLS failure, ...). */
    void failed(Throwable error);

    /** Vert.x is shutting its server down: finish gracefully. */
    void shutdownRequested();

    /** The socket is closed, for whatever reason. */
    void closed();
  }

  private static final Hooks HOOKS = Hooks.find();
  /** The name Vert.x gives its TLS handler in the pipeline (5.0 to 5.2; an SNI handler until the ClientHello). */
  private static final String TLS_HANDLER = "ssl";
  /**
   * Decrypted reads that came between the end of a TLS handshake and the connection's {@link #attach}: Vert.x
   * hands what it queued during the handshake over at once, before the upgrade's future tells anyone.
   */
  private static final AttributeKey<List<ByteBuf>> EARLY_READS = AttributeKey.valueOf("frame-echo.early-reads");
  /** A held socket's client shut down its sending side before the socket was attached. */
  private static final AttributeKey<Boolean> INPUT_ENDED = AttributeKey.valueOf("frame-echo.input-ended-while-held");
  /** The pipeline handler that watches a held socket for the end of its input. */
  private static final String HELD = "frame-echo-held";

  private final NetSocket socket;
  private final NetSocketInternal internal;
  private final Channel channel;
  /** The client shut down its sending side. */
  private boolean inputShutdown;
  /** The FIN is out after the last response; reads are discarded until the client closes. */
  private boolean lingering;

  private ChannelAdapter(NetSocket socket) {
    this.socket = socket;
    this.internal = (NetSocketInternal) socket;
    this.channel = internal.channelHandlerContext().channel();
  }

  /**
   * Wires {@code socket}'s events to {@code events}; call once, on the socket's event loop, when the
   * connection is accepted. {@code writeQueueMaxSize} bytes queued make the socket unwritable; half of it,
   * writable again.
   */
  static ChannelAdapter attach(NetSocket socket, Context context, int writeQueueMaxSize, Events events) {
    ChannelAdapter adapter = new ChannelAdapter(socket);
    adapter.inputShutdown = inputEnded(adapter.channel);
    // Vert.x makes this the channel's water marks: unwritable above it, writable again below half of it.
    socket.setWriteQueueMaxSize(writeQueueMaxSize);
    adapter.channel.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
    EpollInterest.forServer(adapter.channel);
    adapter.channel.pipeline().addBefore("handler", "frame-echo-watch", new ChannelInboundHandlerAdapter() {
      @Override
      public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof ChannelInputShutdownEvent) {
          adapter.inputShutdown = true;
          EpollInterest.edgeTriggered(ctx.channel());
          if (adapter.lingering) {
            // The client has read to our FIN and closed its side: both sides are done.
            adapter.closeNow();
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
    });
    socket.drainHandler(v -> events.writable());
    socket.closeHandler(v -> events.closed());
    socket.shutdownHandler(anyArgument(events::shutdownRequested));
    socket.exceptionHandler(events::failed);
    HOOKS.readNettyBuffers(adapter.internal, events::bytes);
    return adapter;
  }

  /**
   * Hands the connection what was read, decrypted, between the end of its TLS handshake and {@link #attach}: once,
   * after the connection has started, before anything else is read.
   */
  void deliverEarlyReads(Events events) {
    List<ByteBuf> early = channel.hasAttr(EARLY_READS) ? channel.attr(EARLY_READS).getAndSet(null) : null;
    if (early != null) {
      early.forEach(events::bytes);
    }
    if (inputEnded(channel)) {
      // The client shut its side while the socket waited for a slot: it is told now, after what it sent.
      events.inputEnded();
    }
  }

  /**
   * The server side of a TLS handshake on a socket accepted as plain TCP, with {@code options}; nothing of the
   * frame protocol runs until it succeeds. The socket reads nothing until the TLS handler is in place; what is
   * read, decrypted, after the handshake and before {@link #attach} is kept for the connection. If the upgrade
   * fails, the socket is closed. Call on the socket's context; the future completes there.
   * <p>
   * Vert.x (5.0 to 5.2) creates its TLS handler in the listener of a write; if that throws (a cipher suite the engine
   * does not know, found by an embedder's trial), Netty logs the exception, the handler is never placed and Vert.x's
   * future never completes: the client would wait for an answer for ever. Here that upgrade fails and the socket closes.
   */
  public static Future<Void> upgradeToTls(NetSocket socket, ServerSSLOptions options) {
    NetSocketInternal internal = (NetSocketInternal) socket;
    Channel channel = internal.channelHandlerContext().channel();
    Context context = Vertx.currentContext();
    Promise<Void> upgraded = Promise.promise();
    // Bytes a held socket read before the TLS handler existed (its client half-closed while it waited for a slot) are
    // TLS records no handler will see: dropped, and that handshake fails or times out.
    releaseEarlyReads(channel);
    keepEarlyReads(internal, channel);
    channel.config().setAutoRead(false);
    // Vert.x writes once (an empty buffer) before it places the TLS handler (named "ssl" from 5.0 to 5.2), from that
    // write's listener: once that has run, reading starts again (5.1.3 and later turn it back on themselves, in the same
    // listener); a write that went out with no handler placed after it means that listener failed.
    channel.pipeline().addFirst("frame-echo-tls-gate", new ChannelOutboundHandlerAdapter() {
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
    socket.upgradeToSsl(options).onComplete(upgrade -> {
      if (upgrade.succeeded()) {
        upgraded.tryComplete();
      } else {
        upgraded.tryFail(upgrade.cause());
      }
    });
    return upgraded.future().onFailure(e -> internal.channelHandlerContext().close());
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

  /**
   * A socket accepted and neither served nor turned away yet ({@code server.impl.WaitingNewcomers}): it reads
   * nothing, what its client sends waits in the kernel, until {@link #readAgain}. Set from the connect handler,
   * before Netty's first read. A client that half-closes while it waits makes io_uring read to the end anyway (and
   * epoll did, until {@link EpollInterest} dropped EPOLLRDHUP; found by the hostile trial: Netty then closed the socket
   * and Vert.x dropped the request): what is read, and the end, are kept for the connection. A reset while it waits
   * closes the socket quietly; the decision finds it closed.
   */
  public static void holdReading(NetSocket socket) {
    NetSocketInternal internal = (NetSocketInternal) socket;
    Channel channel = internal.channelHandlerContext().channel();
    channel.config().setAutoRead(false);
    channel.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
    // Now, while the channel is registered: after an input shut down, the change would fail and Netty close the socket.
    EpollInterest.forServer(channel);
    keepEarlyReads(internal, channel);
    channel.pipeline().addBefore("handler", HELD, new ChannelInboundHandlerAdapter() {
      @Override
      public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof ChannelInputShutdownEvent) {
          ctx.channel().attr(INPUT_ENDED).set(Boolean.TRUE);
        }
        super.userEventTriggered(ctx, evt);
      }
    });
    socket.exceptionHandler(e -> {
    });
  }

  /** A held socket is served or turned away now: it reads again, unless its client has already shut its side. */
  public static void readAgain(NetSocket socket) {
    Channel channel = channelOf(socket);
    if (channel.pipeline().get(HELD) != null) {
      channel.pipeline().remove(HELD);
    }
    if (!inputEnded(channel)) {
      channel.config().setAutoRead(true);
    }
  }

  private static boolean inputEnded(Channel channel) {
    return channel.hasAttr(INPUT_ENDED) && Boolean.TRUE.equals(channel.attr(INPUT_ENDED).get());
  }

  /**
   * What Vert.x reads before a connection is attached goes to a list the connection gets first
   * ({@link #deliverEarlyReads}); released if the socket closes before.
   */
  private static void keepEarlyReads(NetSocketInternal internal, Channel channel) {
    List<ByteBuf> early = new ArrayList<>();
    channel.attr(EARLY_READS).set(early);
    channel.closeFuture().addListener(closed -> releaseEarlyReads(channel));
    HOOKS.readNettyBuffers(internal, early::add);
  }

  private static void releaseEarlyReads(Channel channel) {
    List<ByteBuf> left = channel.attr(EARLY_READS).getAndSet(null);
    if (left != null) {
      left.forEach(ByteBuf::release);
    }
  }

  /**
   * Reads of {@code socket} are small ({@link CappedReads}) while {@code small} says so. Set at accept, before the
   * socket's first read: Netty keeps the read sizes a channel started reading with. The connection sets its own
   * cap later ({@link #readsCappedBy}).
   */
  public static void capReads(NetSocket socket, BooleanSupplier small) {
    ChannelConfig config = channelOf(socket).config();
    config.setRecvByteBufAllocator(new CappedReads(config.getRecvByteBufAllocator(), small));
  }

  /** This connection's reads take at most what {@code cap} says, when more than a small read (see {@link #capReads}). */
  void readsCappedBy(IntSupplier cap) {
    if (channel.config().getRecvByteBufAllocator() instanceof CappedReads capped) {
      capped.capWith(cap);
    }
  }

  /** Whether a socket not attached yet is still open (a held socket's client may have gone). */
  public static boolean isOpen(NetSocket socket) {
    return channelOf(socket).isOpen();
  }

  private static Channel channelOf(NetSocket socket) {
    return ((NetSocketInternal) socket).channelHandlerContext().channel();
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
    }).closeLingering(lingerMs);
  }

  /**
   * A handler that ignores its argument, whatever its type: {@code shutdownHandler} takes a
   * {@code Handler<Void>} in Vert.x 5.0 and a {@code Handler<Duration>} (the time left) from 5.1 on. A
   * lambda typed for either one casts its argument, and fails on the other line.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static <T> Handler<T> anyArgument(Runnable action) {
    Handler<Object> handler = ignored -> action.run();
    return (Handler) handler;
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
   */
  @Override
  public void closeLingering(long lingerMs) {
    finThenLinger(lingerMs, false);
  }

  /**
   * As {@link #closeLingering}, but the socket closes on the event loop's next turn after the FIN: what the client
   * had already sent is read (and discarded) in that turn, so the close sends no reset, and an idle client that
   * keeps its socket open does not hold the server's stop.
   */
  @Override
  public void closeOwingNothing() {
    finThenLinger(0, true);
  }

  private void finThenLinger(long lingerMs, boolean afterFin) {
    internal.writeMessage(Unpooled.EMPTY_BUFFER).onComplete(written -> {
      if (written.failed() || (lingerMs == 0 && !afterFin) || inputShutdown || !(channel instanceof DuplexChannel duplex)) {
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
    });
  }

  @Override
  public boolean lingering() {
    return lingering;
  }

  @Override
  public boolean resetByPeer() {
    return EpollInterest.tcpState(channel) == EpollInterest.TCP_CLOSE;
  }

  @Override
  public long msSinceDataSent() {
    return EpollInterest.msSinceDataSent(channel);
  }

  @Override
  public boolean clientClosed() {
    int state = EpollInterest.tcpState(channel);
    return state == EpollInterest.TCP_CLOSE_WAIT || state == EpollInterest.TCP_CLOSE;
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

  /** The listening channel {@code socket} was accepted by, to stop accepting before Vert.x closes it. */
  public static Listener listenerOf(NetSocket socket) {
    Channel parent = ((NetSocketInternal) socket).channelHandlerContext().channel().parent();
    return parent == null ? null : new Listener(parent);
  }

  /**
   * A server's listening channel (Netty's parent of the sockets it accepted). Vert.x's shutdown first takes the
   * server's event loop out of the listener's round robin, then closes the listener: a connection the listener
   * accepts in between is closed unanswered (Vert.x 5.0 to 5.2), and the kernel's queue of connections not
   * accepted yet is dropped (or, with {@code tcp_migrate_req}, moved to another listener of a reuseport group)
   * only when the listener closes. So the server stops the listener reading first: nothing more is accepted,
   * what the kernel holds stays queued until the close.
   */
  public static final class Listener {

    private final Channel channel;

    private Listener(Channel channel) {
      this.channel = channel;
    }

    /**
     * Stops accepting; the future completes on {@code context} once the listener's event loop has handed every
     * connection it already accepted to its event loop (and those event loops' earlier tasks, which register
     * them, have run).
     */
    public Future<Void> stopAccepting(Context context) {
      Promise<Void> done = Promise.promise();
      channel.eventLoop().execute(() -> {
        channel.config().setAutoRead(false);
        context.runOnContext(v -> done.complete());
      });
      return done.future();
    }

    /**
     * Accepting again, if the listener is still open after Vert.x's shutdown began: other servers share it (another
     * deployment on the same port), and Vert.x keeps it for them.
     */
    public void resumeIfOpen() {
      channel.eventLoop().execute(() -> {
        if (channel.isOpen()) {
          channel.config().setAutoRead(true);
        }
      });
    }
  }

  /**
   * Completes on {@code context} once every listener Vert.x has closed is unbound. Vert.x's close future completes
   * when Netty's does; on NIO the JDK then closes the socket only at its selector's next select, on the acceptor
   * event loop. Netty moves due scheduled tasks to its queue only before a batch of tasks, after its IO pass, so
   * a task scheduled from that event loop runs after a select; two in a row, after two.
   */
  public static Future<Void> listenersUnbound(Vertx vertx, Context context) {
    List<Future<Void>> loops = new ArrayList<>();
    for (EventExecutor loop : ((VertxInternal) vertx).acceptorEventLoopGroup()) {
      Promise<Void> done = Promise.promise();
      loop.execute(() -> loop.schedule(() -> loop.schedule(() -> context.runOnContext(v -> done.complete()),
        0, TimeUnit.MILLISECONDS), 0, TimeUnit.MILLISECONDS));
      loops.add(done.future());
    }
    return Future.all(loops).mapEmpty();
  }

  /** The transport {@code vertx} runs on: nio, epoll, io_uring (or kqueue). */
  public static String transportName(Vertx vertx) {
    String name = ((VertxInternal) vertx).transport().getClass().getSimpleName().toLowerCase(Locale.ROOT);
    return name.replace("transport", "").replace("iouring", "io_uring");
  }

  /**
   * Changes to an epoll channel's interest set, on its event loop, while it is registered: two at accept, one once its
   * input has ended.
   * <ul>
   *   <li><b>EPOLLERR kept.</b> Netty's epoll transport from 4.2.13 on (4.2.18, the newest, included; 4.2.12 does
   *   not): a channel whose interest set empties (its input half-closed, nothing waiting to be written) is taken out
   *   of epoll, while its registration still counts as added. The next write that must wait for the socket then asks
   *   epoll to modify what it no longer has (ENOENT), and Netty shuts the output down: the responses still queued for a
   *   half-closed client are lost (seen by the hostile trial: 15 of 80 such clients got their echo cut short).
   *   EPOLLERR is reported by epoll whether asked for or not; kept in the interest set, it changes nothing else and
   *   the set never empties.</li>
   *   <li><b>EPOLLRDHUP dropped.</b> Told that a client shut down its sending side, Netty reads that socket to its
   *   end whether reading is on or not, so no pause holds: not the budget's, not a full write queue's, not a
   *   newcomer's wait for a slot (5,000 quiet budget holders that closed at once made the server read 645 MB more
   *   while paused, 1.4 times a 1.5 GB budget). Netty 4.2's epoll is level-triggered: the end of the input is still
   *   seen, as EPOLLIN, once reading is on and the bytes before it are read; a reset still comes as EPOLLERR.</li>
   *   <li><b>Edge-triggered once the input has ended.</b> With the input read to its end, Netty no longer reads on
   *   EPOLLERR, and with nothing to write it does nothing else with it: kept in the set, a reset (EPOLLERR and EPOLLHUP,
   *   reported for as long as they last) would wake the event loop in every poll until the connection's next write
   *   fails (found by a hostile trial: a client that half-closed, then reset while its answer was awaited, kept a core
   *   busy for the 8 s the answer took). Edge-triggered, it is reported once. Nothing is read after the input ended,
   *   so Netty's level-triggered reading is not affected; writes wait for EPOLLOUT as Netty did with edge triggering
   *   before 4.2.</li>
   * </ul>
   */
  private static final class EpollInterest {

    private static final Class<?> CHANNEL;
    private static final Method SET_FLAG;
    private static final Method CLEAR_FLAG;
    private static final int EPOLLERR;
    private static final int EPOLLRDHUP;
    private static final int EPOLLET;
    /** {@code EpollSocketChannel.tcpInfo()}, and {@code EpollTcpInfo.state()} and {@code lastDataSent()}. */
    private static final Method TCP_INFO;
    private static final Method STATE;
    private static final Method LAST_DATA_SENT;
    /** Linux's {@code TCP_CLOSE} and {@code TCP_CLOSE_WAIT} states. */
    static final int TCP_CLOSE = 7;
    static final int TCP_CLOSE_WAIT = 8;

    static {
      Class<?> channel = null;
      Method setFlag = null;
      Method clearFlag = null;
      int epollErr = 0;
      int epollRdHup = 0;
      int epollEt = 0;
      Method tcpInfo = null;
      Method state = null;
      Method lastDataSent = null;
      try {
        channel = Class.forName("io.netty.channel.epoll.AbstractEpollChannel");
        setFlag = channel.getDeclaredMethod("setFlag", int.class);
        setFlag.setAccessible(true);
        clearFlag = channel.getDeclaredMethod("clearFlag", int.class);
        clearFlag.setAccessible(true);
        Class<?> ops = Class.forName("io.netty.channel.epoll.EpollIoOps");
        Method value = ops.getMethod("value");
        epollErr = (int) value.invoke(ops.getField("EPOLLERR").get(null));
        epollRdHup = (int) value.invoke(ops.getField("EPOLLRDHUP").get(null));
        epollEt = (int) value.invoke(ops.getField("EPOLLET").get(null));
        tcpInfo = Class.forName("io.netty.channel.epoll.EpollSocketChannel").getMethod("tcpInfo");
        state = Class.forName("io.netty.channel.epoll.EpollTcpInfo").getMethod("state");
        lastDataSent = state.getDeclaringClass().getMethod("lastDataSent");
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        channel = null;
      }
      CHANNEL = channel;
      SET_FLAG = setFlag;
      CLEAR_FLAG = clearFlag;
      EPOLLERR = epollErr;
      EPOLLRDHUP = epollRdHup;
      EPOLLET = epollEt;
      TCP_INFO = channel == null ? null : tcpInfo;
      STATE = state;
      LAST_DATA_SENT = lastDataSent;
    }

    /** On the channel's event loop, once it is registered. */
    static void forServer(Channel channel) {
      if (CHANNEL != null && CHANNEL.isInstance(channel)) {
        try {
          // In this order: a set emptied for a moment would take the channel out of epoll (the first item above).
          SET_FLAG.invoke(channel, EPOLLERR);
          CLEAR_FLAG.invoke(channel, EPOLLRDHUP);
        } catch (ReflectiveOperationException e) {
          channel.pipeline().fireExceptionCaught(e.getCause() != null ? e.getCause() : e);
        }
      }
    }

    /** The channel's input has ended: it is edge-triggered from now on. On its event loop. */
    static void edgeTriggered(Channel channel) {
      if (CHANNEL != null && CHANNEL.isInstance(channel) && channel.isRegistered()) {
        try {
          SET_FLAG.invoke(channel, EPOLLET);
        } catch (ReflectiveOperationException e) {
          channel.pipeline().fireExceptionCaught(e.getCause() != null ? e.getCause() : e);
        }
      }
    }

    /**
     * The kernel's state of the channel's TCP connection (its TCP_INFO), through the epoll channel's public
     * {@code tcpInfo()}; found reflectively, as the epoll classes may be missing. -1 on other channels. While the
     * server has not closed its side, {@link #TCP_CLOSE} means a reset, {@link #TCP_CLOSE_WAIT} a client that closed
     * its side.
     */
    static int tcpState(Channel channel) {
      return (int) tcpInfo(channel, STATE);
    }

    /**
     * Milliseconds since the kernel last sent the client a byte of data (TCP_INFO's {@code last_data_sent}), or -1 on
     * other channels. With data queued, it sends whenever the client's window opens by a segment: it grows while the
     * client reads nothing (zero-window probes carry no data), and for a while between a slow reader's segments.
     */
    static long msSinceDataSent(Channel channel) {
      return tcpInfo(channel, LAST_DATA_SENT);
    }

    /** One field of the channel's TCP_INFO, or -1 where it cannot be read. */
    private static long tcpInfo(Channel channel, Method field) {
      if (TCP_INFO == null || !TCP_INFO.getDeclaringClass().isInstance(channel)) {
        return -1;
      }
      try {
        return ((Number) field.invoke(TCP_INFO.invoke(channel))).longValue();
      } catch (ReflectiveOperationException | RuntimeException e) {
        return -1;
      }
    }

    static String description() {
      return CHANNEL != null ? "; epoll channels keep EPOLLERR in their interest set (Netty 4.2.13+ half-close), drop "
        + "EPOLLRDHUP (a paused socket is not read) and turn edge-triggered once their input has ended" : "";
    }
  }

  /** One line for the start-up log: the Vert.x version and how this adapter reads on it. */
  public static String hooks() {
    return "Vert.x " + HOOKS.vertxVersion + ": " + HOOKS.description + EpollInterest.description();
  }

  /** How reads reach the connection on the Vert.x line found at start-up. */
  private static final class Hooks {

    private final MethodHandle messageHandler;
    private final String vertxVersion;
    private final String description;

    private Hooks(MethodHandle messageHandler, String description) {
      this.messageHandler = messageHandler;
      this.vertxVersion = vertxVersion();
      this.description = description;
    }

    /** {@code messageHandler(Handler)}, whatever it returns and whichever interface declares it. */
    static Hooks find() {
      try {
        Method method = NetSocketInternal.class.getMethod("messageHandler", Handler.class);
        MethodHandle handle = MethodHandles.publicLookup().unreflect(method)
          .asType(MethodType.methodType(void.class, NetSocketInternal.class, Handler.class));
        return new Hooks(handle, "reads Netty's buffers through " + method.getDeclaringClass().getSimpleName()
          + ".messageHandler, writes through writeMessage");
      } catch (NoSuchMethodException | IllegalAccessException | RuntimeException e) {
        return new Hooks(null, "no NetSocketInternal.messageHandler (" + e + "); reads are copied from the public handler");
      }
    }

    void readNettyBuffers(NetSocketInternal socket, Consumer<ByteBuf> reads) {
      if (messageHandler == null) {
        socket.handler(buffer -> reads.accept(Unpooled.wrappedBuffer(buffer.getBytes())));
        return;
      }
      Handler<Object> handler = msg -> {
        if (msg instanceof ByteBuf bytes) {
          reads.accept(bytes);
        } else {
          ReferenceCountUtil.release(msg);
        }
      };
      try {
        messageHandler.invokeExact(socket, handler);
      } catch (Throwable e) {
        throw new IllegalStateException("NetSocketInternal.messageHandler failed", e);
      }
    }

    private static String vertxVersion() {
      try (InputStream in = Vertx.class.getClassLoader().getResourceAsStream("META-INF/vertx/vertx-version.txt")) {
        return in == null ? "(version unknown)" : new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
      } catch (IOException e) {
        return "(version unknown)";
      }
    }
  }
}
