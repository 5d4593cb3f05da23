package io.frameecho.server.impl.netty;

import io.frameecho.server.impl.netty.Handover.Successor;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.channel.unix.DomainSocketReadMode;
import io.netty.channel.unix.FileDescriptor;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The old process's side of a handover, against a bare unix-socket receiver: a link only to this user's successor,
 * the socket's own descriptor sent, at most a window of them unacknowledged, and the link ended once every one sent is
 * acknowledged (or after the wait).
 */
class SuccessorTest {

  @TempDir
  Path dir;

  private Vertx vertx;
  private Context context;
  private EventLoopGroup group;
  private Path path;
  private Channel receiver;
  private final CompletableFuture<Channel> link = new CompletableFuture<>();
  private final CompletableFuture<Void> linkClosed = new CompletableFuture<>();
  private final List<FileDescriptor> received = new CopyOnWriteArrayList<>();
  private final List<AutoCloseable> toClose = new CopyOnWriteArrayList<>();
  private int uid;

  @BeforeEach
  void start() throws Exception {
    assumeTrue(Epoll.isAvailable(), "epoll is not available here");
    uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    vertx = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));
    context = vertx.getOrCreateContext();
    group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    path = dir.resolve("handover.sock");
    receiver = new ServerBootstrap().group(group).channel(EpollServerDomainSocketChannel.class)
      .childOption(EpollChannelOption.DOMAIN_SOCKET_READ_MODE, DomainSocketReadMode.FILE_DESCRIPTORS)
      .childHandler(new ChannelInitializer<Channel>() {
        @Override
        protected void initChannel(Channel ch) {
          ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelActive(ChannelHandlerContext ctx) {
              link.complete(ctx.channel());
            }

            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
              if (msg instanceof FileDescriptor fd) {
                received.add(fd);
              } else {
                ReferenceCountUtil.release(msg);
              }
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
              linkClosed.complete(null);
            }
          });
        }
      }).bind(new DomainSocketAddress(path.toString())).sync().channel();
  }

  @AfterEach
  void stop() throws Exception {
    for (FileDescriptor fd : received) {
      fd.close();
    }
    for (AutoCloseable c : toClose) {
      c.close();
    }
    if (receiver != null) {
      receiver.close().sync();
    }
    if (group != null) {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
    if (vertx != null) {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static Throwable failure(Future<?> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().handle((v, e) -> e).get(10, TimeUnit.SECONDS);
  }

  private Successor connected() throws Exception {
    Successor successor = await(Successor.connect(context, path.toString(), uid));
    link.get(10, TimeUnit.SECONDS);
    return successor;
  }

  /** The server side of a loopback TCP connection, accepted by an epoll listener; its client is closed after the test. */
  private EpollSocketChannel accepted() throws Exception {
    CompletableFuture<Channel> accepted = new CompletableFuture<>();
    Channel listener = new ServerBootstrap().group(group).channel(EpollServerSocketChannel.class)
      .childHandler(new ChannelInitializer<Channel>() {
        @Override
        protected void initChannel(Channel ch) {
          accepted.complete(ch);
        }
      }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
    toClose.add(() -> listener.close().sync());
    Socket client = new Socket();
    toClose.add(0, client);
    client.connect(listener.localAddress(), 10_000);
    EpollSocketChannel channel = (EpollSocketChannel) accepted.get(10, TimeUnit.SECONDS);
    toClose.add(0, () -> channel.close().sync());
    return channel;
  }

  /** Hands {@code channel} over {@code times} times in one task of its event loop; how many were told "sent" in it. */
  private static int handOverInOneTask(Successor successor, Channel channel, int times, AtomicInteger sent,
                                       CompletableFuture<Boolean> last) throws Exception {
    CompletableFuture<Integer> inTask = new CompletableFuture<>();
    channel.eventLoop().execute(() -> {
      for (int i = 0; i < times; i++) {
        boolean isLast = i == times - 1;
        successor.handOver(channel, went -> {
          if (went) {
            sent.incrementAndGet();
          }
          if (isLast) {
            last.complete(went);
          }
        });
      }
      inTask.complete(sent.get());
    });
    return inTask.get(10, TimeUnit.SECONDS);
  }

  @Test
  void aLinkIsMadeOnlyToASuccessorOfThisUser() throws Exception {
    Throwable otherUser = failure(Successor.connect(context, path.toString(), uid + 1));
    assertEquals("the process listening there runs as user " + uid + ", not as this process's user " + (uid + 1),
      otherUser.getMessage());
    linkClosed.get(10, TimeUnit.SECONDS);
    assertNotNull(failure(Successor.connect(context, dir.resolve("nobody.sock").toString(), uid)), "nobody listens there");
    Successor successor = connected();
    await(successor.close(vertx, 10_000));
  }

  @Test
  void whatIsSentIsTheSocketsOwnDescriptor() throws Exception {
    Successor successor = connected();
    EpollSocketChannel channel = accepted();
    AtomicInteger sent = new AtomicInteger();
    CompletableFuture<Boolean> went = new CompletableFuture<>();
    assertEquals(1, handOverInOneTask(successor, channel, 1, sent, went));
    assertTrue(went.get(10, TimeUnit.SECONDS));
    link.get().writeAndFlush(Unpooled.wrappedBuffer(new byte[1])).sync();
    await(successor.close(vertx, 10_000));
    linkClosed.get(10, TimeUnit.SECONDS);
    assertEquals(1, received.size());
    io.netty.channel.unix.Socket socket = new io.netty.channel.unix.Socket(received.get(0).intValue());
    assertEquals(channel.remoteAddress(), socket.remoteAddress(), "the same connection, its client's address");
    assertEquals(channel.localAddress(), socket.localAddress());
  }

  @Test
  void atMostAWindowIsOnItsWayTheNextWaitsForAnAcknowledgement() throws Exception {
    Successor successor = connected();
    EpollSocketChannel channel = accepted();
    AtomicInteger sent = new AtomicInteger();
    CompletableFuture<Boolean> last = new CompletableFuture<>();
    assertEquals(Successor.WINDOW, handOverInOneTask(successor, channel, Successor.WINDOW + 1, sent, last));
    assertFalse(last.isDone(), "the one past the window is neither sent nor given up");
    link.get().writeAndFlush(Unpooled.wrappedBuffer(new byte[1])).sync();
    assertTrue(last.get(10, TimeUnit.SECONDS), "sent once one was acknowledged");
    assertEquals(Successor.WINDOW + 1, sent.get());
    link.get().writeAndFlush(Unpooled.wrappedBuffer(new byte[Successor.WINDOW])).sync();
    await(successor.close(vertx, 10_000));
  }

  @Test
  void theLinkEndsOnceEveryDescriptorSentIsAcknowledged() throws Exception {
    Successor successor = connected();
    EpollSocketChannel channel = accepted();
    assertEquals(2, handOverInOneTask(successor, channel, 2, new AtomicInteger(), new CompletableFuture<>()));
    Future<Void> closed = successor.close(vertx, 60_000);
    // Two turns of the link's event loop: the close's task, then what a close would fire.
    CompletableFuture<Boolean> closedEarly = new CompletableFuture<>();
    context.runOnContext(v -> context.runOnContext(w -> closedEarly.complete(closed.isComplete())));
    assertFalse(closedEarly.get(10, TimeUnit.SECONDS), "two descriptors not acknowledged yet");
    link.get().writeAndFlush(Unpooled.wrappedBuffer(new byte[1])).sync();
    link.get().writeAndFlush(Unpooled.wrappedBuffer(new byte[1])).sync();
    await(closed);
    linkClosed.get(10, TimeUnit.SECONDS);
    assertEquals(2, received.size(), "both read before the link ended");
  }

  @Test
  void withoutAcknowledgementsTheLinkEndsAfterTheWait() throws Exception {
    Successor successor = connected();
    EpollSocketChannel channel = accepted();
    assertEquals(1, handOverInOneTask(successor, channel, 1, new AtomicInteger(), new CompletableFuture<>()));
    await(successor.close(vertx, 50));
    linkClosed.get(10, TimeUnit.SECONDS);
  }

  @Test
  void onceTheLinkHasEndedNothingIsSent() throws Exception {
    Successor successor = connected();
    await(successor.close(vertx, 10_000));
    EpollSocketChannel channel = accepted();
    CompletableFuture<Boolean> went = new CompletableFuture<>();
    assertEquals(0, handOverInOneTask(successor, channel, 1, new AtomicInteger(), went));
    assertFalse(went.get(10, TimeUnit.SECONDS));
    assertTrue(channel.isActive(), "the caller keeps it, to close as without handover");
    linkClosed.get(10, TimeUnit.SECONDS);
    assertEquals(0, received.size());
  }

  @Test
  void onlyAPlainEpollSocketStillWholeCanMove() throws Exception {
    EpollSocketChannel channel = accepted();
    CompletableFuture<List<Boolean>> movable = new CompletableFuture<>();
    channel.eventLoop().execute(() -> {
      boolean whole = Handover.movable(channel);
      channel.shutdownOutput().addListener(done -> movable.complete(List.of(whole, Handover.movable(channel))));
    });
    assertEquals(List.of(true, false), movable.get(10, TimeUnit.SECONDS), "whole, then its output shut down");
    EmbeddedChannel embedded = new EmbeddedChannel();
    assertFalse(Handover.movable(embedded), "not an epoll socket");
    embedded.finishAndReleaseAll();
  }
}
