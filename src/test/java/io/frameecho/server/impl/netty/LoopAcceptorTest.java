package io.frameecho.server.impl.netty;

import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.epoll.EpollSocketChannel;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.transport.Transport;
import io.vertx.junit5.Checkpoint;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** A server made by {@link LoopAcceptor} accepts on its own event loop; one that shares its port, on the first's. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 30, timeUnit = TimeUnit.SECONDS)
class LoopAcceptorTest {

  @Test
  void thisLineHasTheMaker() {
    assertNull(LoopAcceptor.off());
  }

  @Test
  void acceptsOnTheServersOwnEventLoopAndServesOnItsContext(Vertx vertx, VertxTestContext test) {
    Context context = vertx.getOrCreateContext();
    EventLoop loop = ((ContextInternal) context).nettyEventLoop();
    context.runOnContext(v -> {
      NetServer server = LoopAcceptor.create(vertx, context, new NetServerOptions().setHost("127.0.0.1").setPort(0),
        NewcomerPresets.NONE);
      server.connectHandler(socket -> test.verify(() -> {
        Channel channel = VertxLine.channelOf(socket);
        assertSame(loop, channel.parent().eventLoop(), "the listener is registered on the server's event loop");
        assertSame(loop, channel.eventLoop());
        assertSame(context, Vertx.currentContext(), "the socket is the server's context's");
        socket.close();
        test.completeNow();
      }));
      server.listen().onComplete(test.succeeding(s -> vertx.createNetClient().connect(s.actualPort(), "127.0.0.1")));
    });
  }

  /**
   * Vert.x's sharing of a port holds: a second server on the same port (here Vert.x's shared random port, -1) takes
   * its turn of the first one's listener, accepted on the first server's event loop and served on its own.
   */
  @Test
  void aServerSharingThePortIsServedOnItsOwnEventLoop(Vertx vertx, VertxTestContext test) {
    Context first = ((VertxInternal) vertx).createEventLoopContext();
    Context second = ((VertxInternal) vertx).createEventLoopContext();
    EventLoop firstLoop = ((ContextInternal) first).nettyEventLoop();
    EventLoop secondLoop = ((ContextInternal) second).nettyEventLoop();
    assertNotSame(firstLoop, secondLoop, "two event loops (Vert.x gives contexts its loops in turn)");
    Checkpoint served = test.checkpoint(2);
    NetServerOptions options = new NetServerOptions().setHost("127.0.0.1").setPort(-1);
    first.runOnContext(v -> {
      NetServer one = LoopAcceptor.create(vertx, first, options, NewcomerPresets.NONE).connectHandler(socket -> test.verify(() -> {
        assertSame(firstLoop, VertxLine.channelOf(socket).eventLoop());
        served.flag();
      }));
      one.listen().onComplete(test.succeeding(s1 -> second.runOnContext(w -> {
        NetServer two = LoopAcceptor.create(vertx, second, options, NewcomerPresets.NONE).connectHandler(socket -> test.verify(() -> {
          Channel channel = VertxLine.channelOf(socket);
          assertSame(secondLoop, channel.eventLoop());
          assertSame(firstLoop, channel.parent().eventLoop(), "accepted by the first server's listener");
          served.flag();
        }));
        two.listen().onComplete(test.succeeding(s2 -> {
          test.verify(() -> assertEquals(s1.actualPort(), s2.actualPort()));
          var client = vertx.createNetClient();
          client.connect(s1.actualPort(), "127.0.0.1").onComplete(test.succeeding(socket -> { }));
          client.connect(s1.actualPort(), "127.0.0.1").onComplete(test.succeeding(socket -> { }));
        }));
      })));
    });
  }

  /** On epoll, the listener is set up by the presets before it binds: its sockets have keep-alive and its times. */
  @Test
  void theListenerIsSetUpByThePresetsBeforeItBinds(VertxTestContext test) {
    assumeTrue(Transport.EPOLL.available(), "epoll is not available here");
    assumeTrue(EpollProbe.FOUND.presets(), "the preset is off: " + EpollProbe.FOUND.off());
    Vertx epoll = Vertx.builder().withTransport(Transport.EPOLL).build();
    Context context = epoll.getOrCreateContext();
    NewcomerPresets presets = new NewcomerPresets(true, true, new NewcomerPresets.KeepAliveTimes(300, 100, 3));
    context.runOnContext(v -> {
      NetServer server = LoopAcceptor.create(epoll, context, new NetServerOptions().setHost("127.0.0.1").setPort(0)
        .setTcpKeepAlive(true), presets);
      server.connectHandler(socket -> {
        test.verify(() -> {
          EpollSocketChannel channel = (EpollSocketChannel) VertxLine.channelOf(socket);
          assertTrue(channel.config().isKeepAlive());
          assertEquals(300, channel.config().getTcpKeepIdle());
          assertEquals(100, channel.config().getTcpKeepIntvl());
          assertEquals(3, channel.config().getTcpKeepCnt());
          assertNotNull(channel.parent().pipeline().get(NewcomerPresets.Presetting.class), "the listener's handler");
        });
        epoll.close().onComplete(test.succeedingThenComplete());
      });
      server.listen().onComplete(test.succeeding(s -> epoll.createNetClient().connect(s.actualPort(), "127.0.0.1")));
    });
  }
}
