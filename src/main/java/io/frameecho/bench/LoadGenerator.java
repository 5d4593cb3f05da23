package io.frameecho.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import org.HdrHistogram.Histogram;

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Drives one benchmark run: opens the connections on a group of Netty event loops (or, with churn, lets
 * clients connect per request: {@link ChurnLoad}), lets them send, prints
 * a progress line a second, and gathers the figures measured after the warm-up. The calling thread
 * waits; it must not be an event loop.
 */
public final class LoadGenerator {

  /** Connections opened at once; more would overflow a server's accept backlog. */
  private static final int CONNECT_BATCH = 500;
  /** A run with a request count gives up when nothing completes for this long. */
  private static final long STALL_LIMIT_NANOS = TimeUnit.SECONDS.toNanos(30);

  private final BenchSettings settings;
  private final BenchTls tls;

  public LoadGenerator(BenchSettings settings) {
    this(settings, null);
  }

  /**
   * @param tls TLS for every connection, or null for plain TCP
   */
  public LoadGenerator(BenchSettings settings, BenchTls tls) {
    this.settings = settings;
    this.tls = tls;
  }

  /**
   * @param progress where to print a line a second, or null for none
   */
  public BenchResult run(PrintStream progress) throws InterruptedException {
    LoadStats stats = new LoadStats();
    AtomicLong budget = settings.requests() > 0 ? new AtomicLong(settings.requests()) : null;
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(settings.threads(), ioHandlerFactory());
    ByteBuf template = payloadTemplate();
    List<BenchConnection> connections = new ArrayList<>();
    List<Channel> channels = new ArrayList<>();
    ChurnLoad churn = null;
    try {
      if (settings.churn()) {
        churn = new ChurnLoad(settings, stats, budget, template, group, bootstrap(group), churnAddress(),
          tls == null ? null : tls.context());
        return measure(stats, churnLoad(churn), progress);
      }
      connect(group, stats, budget, template, connections, channels);
      if (channels.isEmpty()) {
        return new BenchResult(settings, 0, 0, 0, 0, 0, 0, stats.connectionFailures.sum(), 0, 0,
          new Histogram(1, LoadStats.HIGHEST_LATENCY_NANOS, 3), 0,
          stats.firstError() != null ? stats.firstError() : "no connection could be opened");
      }
      return measure(stats, steadyLoad(connections, channels), progress);
    } finally {
      if (churn != null) {
        churn.closeAll();
      }
      for (Channel c : channels) {
        c.close();
      }
      group.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
      template.release();
    }
  }

  /** What {@link #measure} drives: the connections of a steady run, or the clients of a churn run. */
  private interface Load {
    void start();

    /** Waits until the load has ended by itself (true: the request count spent, or every connection closed) or the time is up. */
    boolean awaitEnd(long nanos) throws InterruptedException;

    /** Asks the load to end once what is in flight is answered. */
    void stop();
  }

  private static Load steadyLoad(List<BenchConnection> connections, List<Channel> channels) {
    return new Load() {
      @Override
      public void start() {
        connections.forEach(BenchConnection::start);
      }

      @Override
      public boolean awaitEnd(long nanos) throws InterruptedException {
        return waitForCloseOrTime(channels, nanos);
      }

      @Override
      public void stop() {
        connections.forEach(BenchConnection::stop);
      }
    };
  }

  private static Load churnLoad(ChurnLoad churn) {
    return new Load() {
      @Override
      public void start() {
        churn.start();
      }

      @Override
      public boolean awaitEnd(long nanos) throws InterruptedException {
        return churn.awaitEnd(nanos);
      }

      @Override
      public void stop() {
        churn.stop();
      }
    };
  }

  /** Native epoll where it loads (fewer system calls per request), NIO elsewhere. */
  public static String transport() {
    return Epoll.isAvailable() ? "epoll" : "nio";
  }

  private static IoHandlerFactory ioHandlerFactory() {
    return Epoll.isAvailable() ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
  }

  private Class<? extends Channel> channelClass() {
    if (settings.unixSocket() != null) {
      return Epoll.isAvailable() ? EpollDomainSocketChannel.class : NioDomainSocketChannel.class;
    }
    return Epoll.isAvailable() ? EpollSocketChannel.class : NioSocketChannel.class;
  }

  /** The server's address in the form the channel class takes. */
  private SocketAddress serverAddress() {
    if (settings.unixSocket() == null) {
      return InetSocketAddress.createUnresolved(settings.host(), settings.port());
    }
    return Epoll.isAvailable() ? new DomainSocketAddress(settings.unixSocket()) : UnixDomainSocketAddress.of(settings.unixSocket());
  }

  /** For churn, a TCP address resolved once rather than at every connect. */
  private SocketAddress churnAddress() {
    if (settings.unixSocket() == null) {
      InetSocketAddress resolved = new InetSocketAddress(settings.host(), settings.port());
      if (!resolved.isUnresolved()) {
        return resolved;
      }
    }
    return serverAddress();
  }

  /** The channel class and options every connection of the run uses. */
  private Bootstrap bootstrap(EventLoopGroup group) {
    Bootstrap bootstrap = new Bootstrap().group(group).channel(channelClass())
      .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000);
    if (settings.unixSocket() == null) {
      // A unix socket has no Nagle to switch off (Netty would warn of an unknown option).
      bootstrap.option(ChannelOption.TCP_NODELAY, true);
    }
    return bootstrap;
  }

  private ByteBuf payloadTemplate() {
    if (settings.verify() || settings.idle() || settings.size().max() == 0) {
      return Unpooled.buffer(0);
    }
    ByteBuf template = Unpooled.directBuffer(settings.size().max());
    for (int i = 0; i < settings.size().max(); i++) {
      template.writeByte('a' + i % 26);
    }
    return template;
  }

  private void connect(EventLoopGroup group, LoadStats stats, AtomicLong budget, ByteBuf template,
                       List<BenchConnection> connections, List<Channel> channels) throws InterruptedException {
    SslContext sslContext = tls == null ? null : tls.context();
    Bootstrap bootstrap = bootstrap(group);
    SocketAddress server = serverAddress();
    for (int first = 0; first < settings.connections(); first += CONNECT_BATCH) {
      List<ChannelFuture> batch = new ArrayList<>();
      List<BenchConnection> handlers = new ArrayList<>();
      List<SslHandler> sslHandlers = new ArrayList<>();
      for (int i = first; i < Math.min(first + CONNECT_BATCH, settings.connections()); i++) {
        BenchConnection handler = new BenchConnection(i, settings, stats, budget, template);
        handlers.add(handler);
        SslHandler ssl = sslContext == null ? null : sslContext.newHandler(ByteBufAllocator.DEFAULT, settings.host(), settings.port());
        sslHandlers.add(ssl);
        batch.add(bootstrap.clone().handler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(Channel channel) {
            if (ssl != null) {
              channel.pipeline().addLast(ssl);
            }
            channel.pipeline().addLast(handler);
          }
        }).connect(server));
      }
      for (int i = 0; i < batch.size(); i++) {
        ChannelFuture f = batch.get(i);
        Throwable failure = null;
        if (!f.await(15, TimeUnit.SECONDS)) {
          failure = new java.util.concurrent.TimeoutException("timed out");
        } else if (!f.isSuccess()) {
          failure = f.cause();
        } else if (sslHandlers.get(i) != null) {
          io.netty.util.concurrent.Future<Channel> handshake = sslHandlers.get(i).handshakeFuture();
          if (!handshake.await(15, TimeUnit.SECONDS)) {
            failure = new java.util.concurrent.TimeoutException("TLS handshake timed out");
          } else if (!handshake.isSuccess()) {
            failure = handshake.cause();
          }
        }
        if (failure == null) {
          connections.add(handlers.get(i));
          channels.add(f.channel());
        } else {
          stats.connectionFailures.increment();
          stats.noteError("connect to " + settings.target() + " failed: "
            + (failure.getMessage() == null ? failure.getClass().getSimpleName() : failure.getMessage()));
          f.channel().close();
        }
      }
    }
  }

  private BenchResult measure(LoadStats stats, Load load, PrintStream progress) throws InterruptedException {
    long start = System.nanoTime();
    long warmupEnd = start + secondsToNanos(settings.warmupSeconds());
    long deadline = settings.requests() > 0 ? Long.MAX_VALUE : start + secondsToNanos(settings.durationSeconds());
    load.start();

    Histogram measured = new Histogram(1, LoadStats.HIGHEST_LATENCY_NANOS, 3);
    Histogram interval = null;
    boolean measuring = settings.warmupSeconds() == 0;
    long measureStart = start;
    long sentAtStart = 0;
    long receivedAtStart = 0;
    long cpuAtStart = processCpuNanos();
    long lastCompleted = 0;
    long lastCompletedAtTick = 0;
    long lastProgress = start;
    long lastMovement = start;
    long end;
    while (true) {
      long now = System.nanoTime();
      long nextTick = Math.min(lastProgress + TimeUnit.SECONDS.toNanos(1), Math.min(deadline, measuring ? Long.MAX_VALUE : warmupEnd));
      boolean allClosed = load.awaitEnd(nextTick - now);
      now = System.nanoTime();
      interval = stats.latencyNanos.getIntervalHistogram(interval);
      if (measuring) {
        measured.add(interval);
      }
      long completed = stats.completed.sum();
      if (completed != lastCompleted) {
        lastMovement = now;
      }
      if (!measuring && now >= warmupEnd) {
        measuring = true;
        measureStart = now;
        sentAtStart = stats.bytesSent.sum();
        receivedAtStart = stats.bytesReceived.sum();
        cpuAtStart = processCpuNanos();
      }
      if (now - lastProgress >= TimeUnit.MILLISECONDS.toNanos(990)) {
        if (progress != null) {
          progress.printf(Locale.ROOT, "[%5.1f s%s] %,.0f %s/s, %d errors, %d mismatches%s%n",
            (now - start) / 1e9, deadline == Long.MAX_VALUE ? "" : String.format(Locale.ROOT, " / %.0f s", settings.durationSeconds()),
            (completed - lastCompletedAtTick) * 1e9 / (now - lastProgress), settings.churn() ? "connections" : "requests",
            stats.errors.sum(), stats.mismatches.sum(),
            measuring ? "" : " (warm-up)");
        }
        lastProgress = now;
        lastCompletedAtTick = completed;
      }
      lastCompleted = completed;
      if (allClosed || now >= deadline) {
        end = now;
        break;
      }
      if (settings.requests() > 0 && now - lastMovement > STALL_LIMIT_NANOS) {
        stats.errors.increment();
        stats.noteError("no response for " + TimeUnit.NANOSECONDS.toSeconds(STALL_LIMIT_NANOS) + " s; giving up");
        end = now;
        break;
      }
    }
    long cpuAtEnd = processCpuNanos();
    long sent = stats.bytesSent.sum();
    long received = stats.bytesReceived.sum();
    load.stop();
    load.awaitEnd(TimeUnit.SECONDS.toNanos(10));
    // The request count is the histogram's: the figures in the JSON, the text report and the .hgrm file
    // then describe the same requests (a counter read a moment apart from the histogram's snapshot would not).
    return new BenchResult(settings, measured.getTotalCount(), (end - measureStart) / 1e9,
      sent - sentAtStart, received - receivedAtStart, stats.errors.sum(), stats.mismatches.sum(),
      stats.connectionFailures.sum(), stats.serverCloses.sum(), stats.unanswered.sum(), measured, (cpuAtEnd - cpuAtStart) / 1e9, stats.firstError());
  }

  /**
   * Waits until every channel is closed (true) or the time is up (false). A closed channel's inactive
   * event comes a moment after its close future: a task queued behind it on its event loop waits it out, so
   * that the connection has counted how it ended.
   */
  private static boolean waitForCloseOrTime(List<Channel> channels, long nanos) throws InterruptedException {
    long until = System.nanoTime() + Math.max(0, nanos);
    for (Channel c : channels) {
      long left = until - System.nanoTime();
      if (left <= 0 || !c.closeFuture().await(left, TimeUnit.NANOSECONDS)) {
        return channels.stream().noneMatch(Channel::isOpen);
      }
      c.eventLoop().submit(() -> { }).await(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
    }
    return true;
  }

  private static long secondsToNanos(double seconds) {
    return (long) (seconds * 1e9);
  }

  private static long processCpuNanos() {
    if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
      return os.getProcessCpuTime();
    }
    return 0;
  }
}
