package io.frameecho.server.impl.netty;

import io.frameecho.testkit.LogCapture;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.channel.unix.FileDescriptor;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The new process's side of a handover, against a bare predecessor: each descriptor it sends becomes a socket the
 * Vert.x server accepted, and is acknowledged; only this user is heard; what is no connected TCP socket is closed;
 * a server whose listening channel cannot be reached fails the listen.
 */
class AdoptionTest {

  @RegisterExtension
  final LogCapture log = LogCapture.of("io.frameecho.server.FrameEchoServer");

  @TempDir
  Path dir;

  private Vertx vertx;
  private EventLoopGroup group;
  private NetServer server;
  private Path path;
  private int uid;
  private final LinkedBlockingQueue<NetSocket> accepted = new LinkedBlockingQueue<>();
  private final List<AutoCloseable> toClose = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() throws Exception {
    assumeTrue(Epoll.isAvailable(), "epoll is not available here");
    uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    vertx = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));
    group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    path = dir.resolve("handover.sock");
    server = vertx.createNetServer().connectHandler(accepted::add);
    await(server.listen(0, "127.0.0.1"));
  }

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : toClose) {
      c.close();
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

  private Handover listen(int asUser) throws Exception {
    Handover adoption = new Handover(vertx, vertx.getOrCreateContext(), path.toString());
    await(adoption.adopt(new NetServerOptions(), 0, accepted::add, path.toString(), asUser));
    toClose.add(0, () -> await(adoption.finished()));
    return adoption;
  }

  /** A predecessor's link: counts the acknowledgements it gets, and tells when the adoption ends it. */
  private static final class Predecessor extends ChannelInboundHandlerAdapter {
    final AtomicInteger acknowledged = new AtomicInteger();
    final LinkedBlockingQueue<Integer> acks = new LinkedBlockingQueue<>();
    Channel channel;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ByteBuf bytes = (ByteBuf) msg;
      acks.add(acknowledged.addAndGet(bytes.readableBytes()));
      bytes.release();
    }

    void send(int fd) throws Exception {
      channel.writeAndFlush(new FileDescriptor(fd)).sync();
    }

    /** Waits until {@code count} descriptors in all are acknowledged. */
    void awaitAcknowledged(int count) throws Exception {
      while (acknowledged.get() < count) {
        assertNotNull(acks.poll(10, TimeUnit.SECONDS), "acknowledged: " + acknowledged.get() + " of " + count);
      }
    }
  }

  private Predecessor predecessor() throws Exception {
    Predecessor predecessor = new Predecessor();
    predecessor.channel = new Bootstrap().group(group).channel(EpollDomainSocketChannel.class).handler(predecessor)
      .connect(new DomainSocketAddress(path.toString())).sync().channel();
    toClose.add(0, () -> predecessor.channel.close().sync());
    return predecessor;
  }

  /** A listener of the old process's, accepting on loopback. */
  private EpollServerSocketChannel oldListener(CompletableFuture<Channel> accepted) throws Exception {
    Channel listener = new ServerBootstrap().group(group).channel(EpollServerSocketChannel.class)
      .childHandler(new ChannelInitializer<Channel>() {
        @Override
        protected void initChannel(Channel ch) {
          accepted.complete(ch);
        }
      }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
    toClose.add(() -> listener.close().sync());
    return (EpollServerSocketChannel) listener;
  }

  /** A client connected to the old process; its server side is {@code server[0]}. */
  private Socket clientOfTheOldProcess(EpollSocketChannel[] server) throws Exception {
    CompletableFuture<Channel> accepted = new CompletableFuture<>();
    EpollServerSocketChannel listener = oldListener(accepted);
    Socket client = new Socket();
    toClose.add(0, client);
    client.connect(listener.localAddress(), 10_000);
    client.setSoTimeout(10_000);
    server[0] = (EpollSocketChannel) accepted.get(10, TimeUnit.SECONDS);
    toClose.add(0, () -> server[0].close().sync());
    return client;
  }

  @Test
  void aDescriptorSentBecomesASocketTheServerAcceptedAndIsAcknowledged() throws Exception {
    Handover adoption = listen(uid);
    EpollSocketChannel[] old = new EpollSocketChannel[1];
    Socket client = clientOfTheOldProcess(old);
    Predecessor predecessor = predecessor();
    predecessor.send(old[0].fd().intValue());
    NetSocket adopted = accepted.poll(10, TimeUnit.SECONDS);
    assertNotNull(adopted, "the server's connect handler got it");
    assertEquals(client.getLocalPort(), adopted.remoteAddress().port());
    predecessor.awaitAcknowledged(1);
    assertEquals(1, adoption.adopted());
    adopted.write(Buffer.buffer("from the successor"));
    InputStream in = client.getInputStream();
    assertEquals("from the successor", new String(in.readNBytes(18), StandardCharsets.US_ASCII), "the client's own connection");
  }

  @Test
  void whatIsNoConnectedTcpSocketIsClosedAndAcknowledgedWithoutBeingAdopted() throws Exception {
    Handover adoption = listen(uid);
    EpollServerSocketChannel listening = oldListener(new CompletableFuture<>());
    EpollSocketChannel[] old = new EpollSocketChannel[1];
    Socket client = clientOfTheOldProcess(old);
    Predecessor predecessor = predecessor();
    predecessor.send(listening.fd().intValue());
    predecessor.send(old[0].fd().intValue());
    predecessor.awaitAcknowledged(2);
    NetSocket adopted = accepted.poll(10, TimeUnit.SECONDS);
    assertEquals(client.getLocalPort(), adopted.remoteAddress().port(), "the connection, not the listener");
    assertEquals(1, adoption.adopted());
    assertNull(accepted.poll(), "nothing else entered the server");
    assertTrue(listening.isActive(), "the old listener itself is untouched");
  }

  @Test
  void aPredecessorOfAnotherUserIsNotHeard() throws Exception {
    listen(uid + 1);
    Predecessor predecessor = predecessor();
    predecessor.channel.closeFuture().await(10, TimeUnit.SECONDS);
    assertTrue(!predecessor.channel.isOpen(), "the link is closed on it");
    assertEquals(1, log.count(ch.qos.logback.classic.Level.WARN));
  }

  @Test
  void onceClosedNoPredecessorCanReachIt() throws Exception {
    Handover adoption = listen(uid);
    await(adoption.stopAdopting());
    var refused = new Bootstrap().group(group).channel(EpollDomainSocketChannel.class).handler(new ChannelInboundHandlerAdapter())
      .connect(new DomainSocketAddress(path.toString())).await();
    assertTrue(refused.isDone() && !refused.isSuccess(), "connecting after close: " + refused);
  }

  @Test
  void anEntryThatIsNoEpollListenerFailsTheListenAndBindsNothing() throws Exception {
    Vertx nio = Vertx.vertx();
    try {
      Throwable notEpoll = failure(new Handover(nio, nio.getOrCreateContext(), path.toString())
        .adopt(new NetServerOptions(), 0, socket -> socket.close(), path.toString(), uid));
      assertEquals("the listener is not an epoll TCP listener: NioServerSocketChannel", notEpoll.getMessage());
    } finally {
      nio.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
    assertTrue(!Files.exists(path), "nothing bound");
  }

  @Test
  void whatTheEntryAcceptsThatWasNotAdoptedIsClosedUnserved() throws Exception {
    int entryPort = listen(uid).entryPort();
    // The entry listens on a loopback port of its own; a stranger that finds it is closed, never handed on.
    try (Socket stranger = new Socket("127.0.0.1", entryPort)) {
      stranger.setSoTimeout(10_000);
      assertEquals(-1, stranger.getInputStream().read(), "closed by the entry");
    }
    assertTrue(accepted.isEmpty(), "nothing handed on");
  }

  private static Throwable failure(Future<?> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().handle((v, e) -> e).get(10, TimeUnit.SECONDS);
  }
}
