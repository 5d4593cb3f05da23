package io.frameecho.server.impl.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.epoll.Native;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The interest-set workaround (the one reach past Netty's API) is on for this build's Netty, changes an epoll channel's
 * interest set as its Javadoc says (read through the kernel's view of Netty's field, by a test-only reflection), and
 * leaves every other channel alone.
 */
class EpollProbeTest {

  private static final String EPOLL = "io.netty.channel.epoll.";

  @Test
  void onThisNettyTheWorkaroundIsOn() {
    assumeTrue(Epoll.isAvailable(), "epoll is not available here");
    assertEquals(null, EpollProbe.FOUND.off(), "setFlag and clearFlag found on Netty " + io.netty.util.Version.identify()
      .get("netty-transport-classes-epoll"));
  }

  @Test
  void otherChannelsAreLeftAlone() {
    EmbeddedChannel channel = new EmbeddedChannel();
    EpollProbe.FOUND.forServer(channel);
    EpollProbe.FOUND.edgeTriggered(channel);
    assertTrue(channel.isOpen());
    assertFalse(channel.finish());
  }

  @Test
  void anEpollConnectionKeepsEpollErrAndDropsEpollRdHup() throws Exception {
    onAnEpollConnection(server -> {
      assertTrue((value(opsOf(server)) & Native.EPOLLRDHUP) != 0, "Netty's own: EPOLLRDHUP");
      EpollProbe.FOUND.forServer(server);
      assertEquals(0, value(opsOf(server)) & Native.EPOLLRDHUP);
      assertTrue((value(opsOf(server)) & Native.EPOLLERR) != 0);
      EpollProbe.FOUND.edgeTriggered(server);
      assertTrue((value(opsOf(server)) & Native.EPOLLET) != 0);
    });
  }

  private static Object opsOf(Channel channel) throws ReflectiveOperationException {
    Field ops = Class.forName(EPOLL + "AbstractEpollChannel").getDeclaredField("ops");
    ops.setAccessible(true);
    return ops.get(channel);
  }

  private static int value(Object ops) {
    return ((EpollIoOps) ops).value();
  }

  interface OnEventLoop {
    void run(Channel server) throws Exception;
  }

  /** Runs {@code check} on the event loop of the server side of an epoll connection over loopback. */
  private static void onAnEpollConnection(OnEventLoop check) throws Exception {
    assumeTrue(Epoll.isAvailable(), "epoll is not available here");
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    try {
      CompletableFuture<Channel> accepted = new CompletableFuture<>();
      ServerBootstrap bootstrap = new ServerBootstrap().group(group).channel(EpollServerSocketChannel.class);
      Channel listener = bootstrap
        .childHandler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(Channel ch) {
            accepted.complete(ch);
          }
        }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
      Channel client = new Bootstrap().group(group).channel(EpollSocketChannel.class).handler(new ChannelInboundHandlerAdapter())
        .connect(listener.localAddress()).sync().channel();
      Channel server = accepted.get(10, TimeUnit.SECONDS);
      CompletableFuture<Void> checked = new CompletableFuture<>();
      server.eventLoop().execute(() -> {
        try {
          check.run(server);
          checked.complete(null);
        } catch (Throwable e) {
          checked.completeExceptionally(e);
        }
      });
      try {
        checked.get(10, TimeUnit.SECONDS);
      } finally {
        client.close().sync();
        listener.close().sync();
      }
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
  }
}
