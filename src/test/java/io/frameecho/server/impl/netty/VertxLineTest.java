package io.frameecho.server.impl.netty;

import io.vertx.core.Handler;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetSocket;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Vert.x line's differences: reads as Netty buffers where the line has them, copied where it does not, said once. */
class VertxLineTest {

  @Test
  void thisLineReadsNettyBuffers() {
    VertxLine line = new VertxLine(NetSocketInternal.class);
    assertTrue(line.readsNettyBuffers());
    assertNull(line.off());
    assertTrue(line.description().matches("Vert\\.x 5\\.\\S+: reads Netty's buffers through \\w+\\.messageHandler, writes through writeMessage"),
      line.description());
  }

  @Test
  void aLineWithoutMessageHandlerCopiesReadsAndSaysWhy() {
    VertxLine line = new VertxLine(NetSocket.class);
    assertFalse(line.readsNettyBuffers());
    assertTrue(line.off().startsWith("reads as Netty's buffers are off (every read is copied from the public handler): "
      + "no NetSocket.messageHandler (java.lang.NoSuchMethodException"), line.off());
    assertTrue(line.description().endsWith(": reads are copied from the public handler"), line.description());
  }

  @Test
  void oneLineNamesEverythingThatIsOff() {
    EpollProbe epoll = new EpollProbe(name -> name.endsWith(".EpollTcpInfo") ? Object.class
      : Class.forName(name, false, VertxLineTest.class.getClassLoader()));
    String off = Internals.whatIsOff(new VertxLine(NetSocket.class), epoll, ClusterView.lookUp(Vertx.class), "the loop acceptor is off");
    assertTrue(off.startsWith("frame-echo runs without some of Netty's and Vert.x's internals"), off);
    assertTrue(off.contains("reads as Netty's buffers are off") && off.contains("on epoll, TCP_INFO's state")
      && off.contains("on epoll, TCP_INFO's last_data_sent")
      && off.contains("the watch for departed cluster nodes (handler.nodeLeftGraceMs) is off: no Vertx.clusterManager()")
      && off.contains("the loop acceptor is off"), off);
    assertEquals(1, off.lines().count());
    assertNull(Internals.whatIsOff(new VertxLine(NetSocketInternal.class), EpollProbe.FOUND, ClusterView.OFF, LoopAcceptor.off()),
      "nothing is off on this line");
  }

  @Test
  void aShutdownHandlerTakesWhateverTheLinePasses() {
    AtomicInteger runs = new AtomicInteger();
    Handler<Void> onFive = VertxLine.anyArgument(runs::incrementAndGet);
    Handler<Duration> onLater = VertxLine.anyArgument(runs::incrementAndGet);
    onFive.handle(null);
    onLater.handle(Duration.ofSeconds(1));
    assertEquals(2, runs.get());
  }
}
