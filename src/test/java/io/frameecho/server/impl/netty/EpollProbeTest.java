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

/** Each lookup serves one thing: one that fails turns off that alone, and says what and why. */
class EpollProbeTest {

  private static final String EPOLL = "io.netty.channel.epoll.";
  private static final int TCP_ESTABLISHED = 1;

  /** The class loader's lookup, but for {@code broken}, which looks like a Netty without the members we use. */
  private static EpollProbe.Lookup without(String broken) {
    return name -> name.equals(broken) ? Object.class : Class.forName(name, false, EpollProbeTest.class.getClassLoader());
  }

  @Test
  void onThisNettyEveryLookupIsFound() {
    EpollProbe probe = new EpollProbe(without("none"));
    assertEquals(List.of(), probe.off());
    assertTrue(probe.description().contains("EPOLLRDHUP"), probe.description());
  }

  @Test
  void aMissingSetFlagTurnsOffTheInterestChangesAloneAndTheTcpStateIsStillRead() throws Exception {
    EpollProbe probe = new EpollProbe(without(EPOLL + "AbstractEpollChannel"));
    assertEquals(1, probe.off().size(), probe.off().toString());
    assertTrue(probe.off().get(0).startsWith("the interest-set changes"), probe.off().get(0));
    assertTrue(probe.off().get(0).contains("NoSuchMethodException"), "says why: " + probe.off().get(0));
    assertEquals("", probe.description(), "the start-up line no longer claims them");
    onAnEpollConnection(server -> {
      probe.forServer(server);
      assertEquals(TCP_ESTABLISHED, probe.tcpState(server), "reset detection is not turned off with it");
      assertTrue(probe.msSinceDataSent(server) >= 0);
    });
  }

  @Test
  void aMissingTcpInfoTurnsOffItsTwoFieldsAloneAndTheInterestChangesStay() throws Exception {
    EpollProbe probe = new EpollProbe(without(EPOLL + "EpollTcpInfo"));
    assertEquals(2, probe.off().size(), probe.off().toString());
    assertTrue(probe.off().get(0).startsWith("TCP_INFO's state"), probe.off().get(0));
    assertTrue(probe.off().get(1).startsWith("TCP_INFO's last_data_sent"), probe.off().get(1));
    assertTrue(probe.description().contains("EPOLLERR"));
    onAnEpollConnection(server -> {
      probe.forServer(server);
      assertEquals(-1, probe.tcpState(server));
      assertEquals(-1, probe.msSinceDataSent(server));
    });
  }

  @Test
  void withoutTheEpollClassesNothingIsOffAndNothingIsRead() {
    EpollProbe probe = new EpollProbe(name -> {
      throw new ClassNotFoundException(name);
    });
    assertEquals(List.of(), probe.off(), "no epoll channel can exist: nothing is missing");
    assertEquals("", probe.description());
    EmbeddedChannel channel = new EmbeddedChannel();
    probe.forServer(channel);
    probe.edgeTriggered(channel);
    assertEquals(-1, probe.tcpState(channel));
  }

  @Test
  void otherChannelsAreLeftAlone() {
    EmbeddedChannel channel = new EmbeddedChannel();
    EpollProbe.FOUND.forServer(channel);
    EpollProbe.FOUND.edgeTriggered(channel);
    assertEquals(-1, EpollProbe.FOUND.tcpState(channel));
    assertEquals(-1, EpollProbe.FOUND.msSinceDataSent(channel));
    assertTrue(channel.isOpen());
    assertFalse(channel.finish());
  }

  @Test
  void theKernelsStateOfAnEpollConnection() throws Exception {
    onAnEpollConnection(server -> {
      EpollProbe.FOUND.forServer(server);
      assertEquals(TCP_ESTABLISHED, EpollProbe.FOUND.tcpState(server));
    });
  }

  @Test
  void anAcceptedChannelPresetBeforeRegistrationIsAddedWithTheServersInterestSet() throws Exception {
    onAnEpollConnection(true, server -> {
      Object ops = opsOf(server);
      assertTrue((value(ops) & Native.EPOLLERR) != 0, "EPOLLERR kept: " + ops);
      assertEquals(0, value(ops) & Native.EPOLLRDHUP, "EPOLLRDHUP dropped: " + ops);
      EpollProbe.FOUND.forServer(server);
      assertEquals(value(ops), value(opsOf(server)), "nothing left for forServer to change (no epoll_ctl)");
      assertEquals(TCP_ESTABLISHED, EpollProbe.FOUND.tcpState(server));
    });
  }

  @Test
  void withoutThePresetTheServersInterestSetIsSetOnceRegistered() throws Exception {
    onAnEpollConnection(false, server -> {
      assertTrue((value(opsOf(server)) & Native.EPOLLRDHUP) != 0, "Netty's own: EPOLLRDHUP");
      EpollProbe.FOUND.forServer(server);
      assertEquals(0, value(opsOf(server)) & Native.EPOLLRDHUP);
      assertTrue((value(opsOf(server)) & Native.EPOLLERR) != 0);
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
    onAnEpollConnection(false, check);
  }

  /** As above; with {@code preset}, the listener presets each accepted channel before it is registered. */
  private static void onAnEpollConnection(boolean preset, OnEventLoop check) throws Exception {
    assumeTrue(Epoll.isAvailable(), "epoll is not available here");
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    try {
      CompletableFuture<Channel> accepted = new CompletableFuture<>();
      ServerBootstrap bootstrap = new ServerBootstrap().group(group).channel(EpollServerSocketChannel.class);
      if (preset) {
        bootstrap.handler(new ChannelInboundHandlerAdapter() {
          @Override
          public void channelRead(ChannelHandlerContext ctx, Object accepted) {
            EpollProbe.FOUND.preset(accepted);
            ctx.fireChannelRead(accepted);
          }
        });
      }
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
