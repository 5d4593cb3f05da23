package io.frameecho.server.impl;

import ch.qos.logback.classic.Level;
import io.frameecho.server.impl.connection.EchoHandler;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.FrameEchoServer;
import io.frameecho.server.HandlerOptions;
import io.frameecho.server.TlsOptions;
import io.frameecho.testkit.LogCapture;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.transport.Transport;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** What start-up checks and says, where it has logic of its own. */
class StartupChecksTest {

  @Test
  void theServerLogsUnderTheFacadesName() {
    assertEquals(FrameEchoServer.class.getName(), FrameEchoServerImpl.LOGGER);
  }

  @Test
  void theVersionsAreSaidOnceHoweverManyServersStart() {
    try (LogCapture log = LogCapture.of(FrameEchoServerImpl.LOGGER)) {
      StartupChecks.logVersionsOnce();
      StartupChecks.logVersionsOnce();
      assertTrue(log.count(Level.INFO) <= 1, "once per process (an earlier test's server may have said it)");
      assertEquals(0, log.count(Level.WARN));
    }
  }

  @Test
  void aRestartLosesQueuedConnectionsOnlyWhenTheKernelDoesNotMoveThem() {
    assertTrue(StartupChecks.migrateReqWarning("0\n").startsWith("reusePort is on and net.ipv4.tcp_migrate_req is 0"));
    assertNull(StartupChecks.migrateReqWarning("1\n"));
  }

  @Test
  void theHandlerIsNamedForWhatItIs() {
    HandlerOptions handler = new HandlerOptions();
    assertEquals("echo", StartupChecks.describeHandler(new EchoHandler(), handler));
    assertEquals("application (lambda)", StartupChecks.describeHandler(request -> Future.succeededFuture(request), handler));
  }

  @Test
  void keepAliveIsRedissUnlessVertxsOptionsSetIt() {
    NetServerOptions byDefault = StartupChecks.netServerOptions(new FrameEchoOptions());
    assertTrue(byDefault.isTcpKeepAlive());
    assertEquals(300, byDefault.getTcpKeepAliveIdleSeconds());
    assertEquals(100, byDefault.getTcpKeepAliveIntervalSeconds());
    assertEquals(3, byDefault.getTcpKeepAliveCount());
    assertFalse(StartupChecks.netServerOptions(new FrameEchoOptions().setKeepAliveSeconds(0)).isTcpKeepAlive());
    assertFalse(StartupChecks.netServerOptions(new FrameEchoOptions().setUnixSocket("/tmp/frame-echo-ka.sock")).isTcpKeepAlive());
    NetServerOptions own = new NetServerOptions().setTcpKeepAlive(true);
    own.setTcpKeepAliveIdleSeconds(60);
    NetServerOptions given = StartupChecks.netServerOptions(new FrameEchoOptions().setNetServerOptions(own));
    assertEquals(60, given.getTcpKeepAliveIdleSeconds());
    assertEquals(0, given.getTcpKeepAliveCount());
  }

  /** The accepted socket itself carries the keep-alive times, on epoll where Vert.x sets them. */
  @Test
  void anAcceptedSocketProbesAfterTheIdleTime() throws Exception {
    assumeTrue(Transport.EPOLL.available(), "Vert.x sets the keep-alive times on native transports only");
    Vertx vertx = Vertx.builder().withTransport(Transport.EPOLL).build();
    try {
      CompletableFuture<int[]> seen = new CompletableFuture<>();
      NetServer server = vertx.createNetServer(StartupChecks.netServerOptions(new FrameEchoOptions().setHost("127.0.0.1").setPort(0)))
        .connectHandler(socket -> {
          io.netty.channel.Channel channel = ((io.vertx.core.internal.net.NetSocketInternal) socket).channelHandlerContext().channel();
          seen.complete(new int[] {
            Boolean.TRUE.equals(channel.config().getOption(io.netty.channel.ChannelOption.SO_KEEPALIVE)) ? 1 : 0,
            channel.config().getOption(io.netty.channel.epoll.EpollChannelOption.TCP_KEEPIDLE),
            channel.config().getOption(io.netty.channel.epoll.EpollChannelOption.TCP_KEEPINTVL),
            channel.config().getOption(io.netty.channel.epoll.EpollChannelOption.TCP_KEEPCNT)});
          socket.close();
        });
      server.listen().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      try (java.net.Socket client = new java.net.Socket("127.0.0.1", server.actualPort())) {
        assertArrayEquals(new int[] {1, 300, 100, 3}, seen.get(10, TimeUnit.SECONDS));
      }
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void tlsFilesThatCannotBeReadFailBeforeBinding() {
    FrameEchoOptions options = new FrameEchoOptions().setTls(new TlsOptions().setCertPath("/no/such/cert.pem")
      .setKeyPath("/no/such/key.pem"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> StartupChecks.netServerOptions(options));
    assertEquals("invalid frame-echo configuration: tls.certPath: cannot read the file /no/such/cert.pem", e.getMessage());
  }
}
