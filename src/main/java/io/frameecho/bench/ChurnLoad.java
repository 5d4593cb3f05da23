package io.frameecho.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;

import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The churn load ({@code bench --churn}): each of {@code connections} clients connects, sends one frame,
 * reads its echo, closes, and connects again, for the run. What a server pays per connection (accept,
 * set-up, the close) is then most of what it does. Each latency counts from just before the connect to the
 * echo's last byte. A client whose connect fails counts a connection failure and tries again 100 ms later,
 * so a server that comes back during the run (a restart, a reconnect storm) is measured as it does.
 */
final class ChurnLoad {

  /** After a failed connect, a client waits this long before the next (a refused port would spin otherwise). */
  private static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  /** Payloads up to this size are copied into the frame's buffer; larger ones are sent as a slice. */

  private final BenchSettings settings;
  private final LoadStats stats;
  private final AtomicLong requestBudget;
  private final ByteBuf template;
  private final SslContext sslContext;
  private final SocketAddress server;
  private final List<Client> clients = new ArrayList<>();
  private final CountDownLatch ended;
  private volatile boolean stopping;

  /**
   * @param bootstrap the channel class and options of the run (its handler is set here, per client)
   * @param requestBudget connections still to make across all clients, or null when the run is timed
   * @param template at least {@code size.max()} readable bytes, unless verifying
   * @param sslContext TLS for every connection, or null
   */
  ChurnLoad(BenchSettings settings, LoadStats stats, AtomicLong requestBudget, ByteBuf template, EventLoopGroup group,
            Bootstrap bootstrap, SocketAddress server, SslContext sslContext) {
    this.settings = settings;
    this.stats = stats;
    this.requestBudget = requestBudget;
    this.template = template;
    this.sslContext = sslContext;
    this.server = server;
    this.ended = new CountDownLatch(settings.connections());
    for (int i = 0; i < settings.connections(); i++) {
      EventLoop loop = group.next();
      clients.add(new Client(i, loop, bootstrap.clone(loop)));
    }
  }

  /** Starts every client. */
  void start() {
    for (Client client : clients) {
      client.loop.execute(client::next);
    }
  }

  /** Each client finishes the connection it is on (its echo, its close) and makes no other. */
  void stop() {
    stopping = true;
  }

  /** Waits until every client has ended (its share of the budget spent, or stopped), or the time is up. */
  boolean awaitEnd(long nanos) throws InterruptedException {
    return ended.await(Math.max(0, nanos), TimeUnit.NANOSECONDS);
  }

  /** Closes whatever is still open (a client that was waiting on a silent server). */
  void closeAll() {
    stopping = true;
    for (Client client : clients) {
      Channel channel = client.channel;
      if (channel != null) {
        channel.close();
      }
    }
  }

  /** One client: a connection at a time, all of it on one event loop. */
  private final class Client {
    private final int id;
    private final EventLoop loop;
    private final Bootstrap bootstrap;
    private final SplittableRandom random;
    private long nextSeq;
    private boolean ended;
    private volatile Channel channel;

    Client(int id, EventLoop loop, Bootstrap bootstrap) {
      this.id = id;
      this.loop = loop;
      this.bootstrap = bootstrap;
      this.random = new SplittableRandom(id * 0x9E3779B97F4A7C15L);
    }

    /** Makes the next connection, or ends the client; on its event loop. */
    void next() {
      if (stopping || (requestBudget != null && requestBudget.decrementAndGet() < 0)) {
        if (!ended) {
          ended = true;
          channel = null;
          ChurnLoad.this.ended.countDown();
        }
        return;
      }
      Cycle cycle = new Cycle(this, nextSeq++, settings.size().next(random), System.nanoTime());
      ChannelFuture connect = bootstrap.handler(new ChannelInitializer<Channel>() {
        @Override
        protected void initChannel(Channel ch) {
          if (sslContext != null) {
            ch.pipeline().addLast(sslContext.newHandler(ByteBufAllocator.DEFAULT, settings.host(), settings.port()));
          }
          ch.pipeline().addLast(cycle);
        }
      }).connect(server);
      channel = connect.channel();
      connect.addListener(f -> {
        if (!f.isSuccess()) {
          connectFailed(f.cause());
        }
      });
    }

    void connectFailed(Throwable cause) {
      stats.connectionFailures.increment();
      stats.noteError("connect to " + settings.target() + " failed: "
        + (cause == null || cause.getMessage() == null ? String.valueOf(cause) : cause.getMessage()));
      loop.schedule(this::next, RETRY_NANOS, TimeUnit.NANOSECONDS);
    }
  }

  /** One connection of a client: sends its frame once connected, reads the echo, closes; then the next. */
  private final class Cycle extends ChannelInboundHandlerAdapter {
    private final Client client;
    private final int size;
    private final long connectNanos;
    private final long seed;
    private final SingleEcho echo;
    private boolean done;
    private Throwable handshakeFailure;

    Cycle(Client client, long seq, int size, long connectNanos) {
      this.client = client;
      this.size = size;
      this.connectNanos = connectNanos;
      this.seed = PayloadPattern.seed(client.id, seq);
      this.echo = new SingleEcho(settings.framing(), size, seed, settings.verify());
    }

    @Override
    public boolean isSharable() {
      return false;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      // Before a TLS handshake completes, the SslHandler holds this write back.
      BenchConnection.writeFrame(ctx, settings.framing(), size, settings.verify(), seed, template);
      ctx.flush();
      stats.bytesSent.add(size);
      ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ByteBuf in = (ByteBuf) msg;
      try {
        if (done) {
          return;
        }
        switch (echo.read(in)) {
          case WAITING -> { }
          case ECHOED -> {
            stats.recordLatency(System.nanoTime() - connectNanos);
            stats.bytesReceived.add(size);
            stats.completed.increment();
            finish(ctx);
          }
          case MISMATCH -> {
            stats.mismatches.increment();
            finish(ctx);
          }
          case WRONG_LENGTH -> {
            stats.mismatches.increment();
            fail(ctx, "response length " + echo.announcedLength() + " for a request of " + size + " bytes");
          }
          case TOO_MUCH -> fail(ctx, "bytes after the echo of its one request");
        }
      } finally {
        in.release();
      }
    }

    private void finish(ChannelHandlerContext ctx) {
      done = true;
      ctx.close();
    }

    private void fail(ChannelHandlerContext ctx, String why) {
      if (!done) {
        stats.errors.increment();
        stats.noteError("client " + client.id + ": " + why);
      }
      finish(ctx);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
      if (event instanceof SslHandshakeCompletionEvent handshake && !handshake.isSuccess()) {
        handshakeFailure = handshake.cause();
        done = true;
      }
      ctx.fireUserEventTriggered(event);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      if (handshakeFailure != null) {
        ctx.close();
        return;
      }
      fail(ctx, cause.toString());
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      if (handshakeFailure != null) {
        // As in a steady run, a failed TLS handshake is a connection failure, not an error.
        client.connectFailed(handshakeFailure);
        return;
      }
      if (!done) {
        done = true;
        stats.errors.increment();
        stats.noteError("client " + client.id + ": closed by the server before its echo");
      }
      client.next();
    }
  }
}
