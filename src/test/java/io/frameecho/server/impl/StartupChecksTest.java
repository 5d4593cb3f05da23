package io.frameecho.server.impl;

import io.frameecho.server.EchoHandler;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.FrameEchoServer;
import io.frameecho.server.HandlerOptions;
import io.frameecho.server.TlsOptions;
import io.vertx.core.Future;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What start-up checks and says, where it has logic of its own. */
class StartupChecksTest {

  @Test
  void theServerLogsUnderTheFacadesName() {
    assertEquals(FrameEchoServer.class.getName(), FrameEchoServerImpl.LOGGER);
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
  void tlsFilesThatCannotBeReadFailBeforeBinding() {
    FrameEchoOptions options = new FrameEchoOptions().setTls(new TlsOptions().setCertPath("/no/such/cert.pem")
      .setKeyPath("/no/such/key.pem"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> StartupChecks.netServerOptions(options));
    assertEquals("invalid frame-echo configuration: tls.certPath: cannot read the file /no/such/cert.pem", e.getMessage());
  }
}
