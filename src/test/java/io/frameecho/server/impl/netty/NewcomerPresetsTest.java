package io.frameecho.server.impl.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannelRecvByteBufAllocator;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.unix.IntegerUnixChannelOption;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.TCPSSLOptions;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Every accepted socket has the keep-alive times, whether it was made before its listener had them (accepted before
 * the listener's handler was in place, or waiting in the kernel's queue when the listener got them) or after (the
 * kernel copies them from the listener; nothing is set on the socket).
 */
class NewcomerPresetsTest {

  private static final NewcomerPresets.KeepAliveTimes TIMES = new NewcomerPresets.KeepAliveTimes(300, 100, 3);

  @Test
  void socketsMadeBeforeAndAfterTheListenerHadTheTimesAllHaveThem() throws Exception {
    assumeTrue(Epoll.isAvailable(), "epoll is not available here");
    assumeTrue(EpollProbe.FOUND.presets(), "the preset is off: " + EpollProbe.FOUND.off());
    NewcomerPresets presets = new NewcomerPresets(TIMES);
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    BlockingQueue<Channel> accepted = new LinkedBlockingQueue<>();
    List<Boolean> presetAtArrival = new ArrayList<>();
    List<Channel> clients = new ArrayList<>();
    try {
      // The listener accepts only when told to, one socket per read: the others wait in the kernel's queue.
      Channel listener = new ServerBootstrap().group(group).channel(EpollServerSocketChannel.class)
        .option(ChannelOption.AUTO_READ, false)
        .option(ChannelOption.RCVBUF_ALLOCATOR, new ServerChannelRecvByteBufAllocator().maxMessagesPerRead(1))
        .childOption(ChannelOption.SO_KEEPALIVE, true)
        .childHandler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(Channel ch) {
            presetAtArrival.add(EpollProbe.FOUND.wasPreset(ch));
            presets.arrived(ch);
            accepted.add(ch);
          }
        }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
      Bootstrap client = new Bootstrap().group(group).channel(EpollSocketChannel.class).handler(new ChannelInitializer<Channel>() {
        @Override
        protected void initChannel(Channel ch) {
        }
      });
      for (int i = 0; i < 3; i++) {
        clients.add(client.connect(listener.localAddress()).sync().channel());
      }
      listener.read();
      Channel first = accepted.poll(10, TimeUnit.SECONDS);
      assertNotNull(first);
      // The listener's set-up was queued by the first arrival: a task queued after it runs after it.
      int owed = group.submit(() -> listener.pipeline().get(NewcomerPresets.Presetting.class).owed()).get(10, TimeUnit.SECONDS);
      assertEquals(2, owed, "the two sockets still queued when the listener got the times");
      assertEquals(300, listener.config().getOption(new IntegerUnixChannelOption("TCP_KEEPIDLE", 6, 4)), "the listener's");
      clients.add(client.connect(listener.localAddress()).sync().channel());
      listener.config().setAutoRead(true);
      List<Channel> all = new ArrayList<>(List.of(first));
      for (int i = 0; i < 3; i++) {
        Channel next = accepted.poll(10, TimeUnit.SECONDS);
        assertNotNull(next, "socket " + (i + 2) + " accepted");
        all.add(next);
      }
      assertEquals(List.of(false, true, true, true), presetAtArrival,
        "the first was accepted before the handler was in place; the others passed it");
      assertEquals(0, (int) group.submit(() -> listener.pipeline().get(NewcomerPresets.Presetting.class).owed())
        .get(10, TimeUnit.SECONDS), "the socket made after the listener had the times was not given them itself");
      for (Channel socket : all) {
        EpollSocketChannel epoll = (EpollSocketChannel) socket;
        assertEquals(300, epoll.config().getTcpKeepIdle(), "idle of " + socket);
        assertEquals(100, epoll.config().getTcpKeepIntvl(), "interval of " + socket);
        assertEquals(3, epoll.config().getTcpKeepCnt(), "count of " + socket);
        assertTrue(epoll.config().isKeepAlive());
      }
      for (Channel c : clients) {
        c.close().sync();
      }
      listener.close().sync();
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
  }

  @Test
  void theTimesAreTakenOutOfVertxsOptionsSoThatItSetsNonePerSocket() {
    NetServerOptions net = new NetServerOptions();
    TCPSSLOptions tcp = net;
    tcp.setTcpKeepAlive(true);
    tcp.setTcpKeepAliveIdleSeconds(300);
    tcp.setTcpKeepAliveIntervalSeconds(100);
    tcp.setTcpKeepAliveCount(3);
    assertEquals(TIMES, NewcomerPresets.KeepAliveTimes.takeFrom(net));
    assertTrue(net.isTcpKeepAlive(), "Vert.x still turns SO_KEEPALIVE on");
    assertEquals(0, net.getTcpKeepAliveIdleSeconds());
    assertEquals(0, net.getTcpKeepAliveIntervalSeconds());
    assertEquals(0, net.getTcpKeepAliveCount());
  }

  @Test
  void withKeepAliveOffOrNoTimesNothingIsTaken() {
    NetServerOptions off = new NetServerOptions();
    off.setTcpKeepAliveIdleSeconds(300);
    assertNull(NewcomerPresets.KeepAliveTimes.takeFrom(off));
    assertEquals(300, off.getTcpKeepAliveIdleSeconds());
    NetServerOptions kernels = new NetServerOptions();
    ((TCPSSLOptions) kernels).setTcpKeepAlive(true);
    int idle = kernels.getTcpKeepAliveIdleSeconds();
    assertNull(NewcomerPresets.KeepAliveTimes.takeFrom(kernels), "the kernel's times: nothing to give");
    assertEquals(idle, kernels.getTcpKeepAliveIdleSeconds(), "left as it was");
  }
}
