package io.frameecho.server.impl.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The listener, set up before it binds, gives every socket it accepts keep-alive and its times (the kernel copies them
 * from the listener; Vert.x's per-socket option is taken out) and its epoll interest set before registration.
 */
class NewcomerPresetsTest {

  private static final NewcomerPresets.KeepAliveTimes TIMES = new NewcomerPresets.KeepAliveTimes(300, 100, 3);

  @Test
  void everySocketHasTheListenersKeepAliveAndItsInterestSetBeforeRegistration() throws Exception {
    assumeTrue(Epoll.isAvailable(), "epoll is not available here");
    assumeTrue(EpollProbe.FOUND.presets(), "the preset is off: " + EpollProbe.FOUND.off());
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    BlockingQueue<Channel> accepted = new LinkedBlockingQueue<>();
    List<Boolean> presetAtArrival = new ArrayList<>();
    List<Channel> clients = new ArrayList<>();
    try {
      // As Vert.x configures a server's bootstrap: keep-alive set on each socket.
      ServerBootstrap bootstrap = new ServerBootstrap().group(group).channel(EpollServerSocketChannel.class)
        .childOption(ChannelOption.SO_KEEPALIVE, true)
        .childHandler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(Channel ch) {
            presetAtArrival.add(EpollProbe.FOUND.wasPreset(ch));
            accepted.add(ch);
          }
        });
      new NewcomerPresets(true, true, TIMES).onListener(bootstrap);
      assertFalse(bootstrap.config().childOptions().containsKey(ChannelOption.SO_KEEPALIVE), "not set on each socket");
      Channel listener = bootstrap.bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
      Bootstrap client = new Bootstrap().group(group).channel(EpollSocketChannel.class).handler(new ChannelInitializer<Channel>() {
        @Override
        protected void initChannel(Channel ch) {
        }
      });
      List<Channel> all = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        clients.add(client.connect(listener.localAddress()).sync().channel());
        Channel next = accepted.poll(10, TimeUnit.SECONDS);
        assertNotNull(next, "socket " + (i + 1) + " accepted");
        all.add(next);
      }
      assertEquals(List.of(true, true, true), presetAtArrival, "each passed the listener's handler before registration");
      for (Channel socket : all) {
        EpollSocketChannel epoll = (EpollSocketChannel) socket;
        assertTrue(epoll.config().isKeepAlive(), "keep-alive of " + socket);
        assertEquals(300, epoll.config().getTcpKeepIdle(), "idle of " + socket);
        assertEquals(100, epoll.config().getTcpKeepIntvl(), "interval of " + socket);
        assertEquals(3, epoll.config().getTcpKeepCnt(), "count of " + socket);
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
  void withoutPresetsTheBootstrapIsVertxsOwn() {
    ServerBootstrap bootstrap = new ServerBootstrap().childOption(ChannelOption.SO_KEEPALIVE, true);
    NewcomerPresets.NONE.onListener(bootstrap);
    assertEquals(true, bootstrap.config().childOptions().get(ChannelOption.SO_KEEPALIVE));
    assertNull(bootstrap.config().handler());
    assertTrue(bootstrap.config().options().isEmpty());
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
