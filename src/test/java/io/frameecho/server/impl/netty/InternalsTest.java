package io.frameecho.server.impl.netty;

import io.netty.channel.epoll.Epoll;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** What start-up says of the Vert.x and Netty it runs on. */
class InternalsTest {

  @Test
  void theVertxVersionIsTheRunningOnes() {
    String version = Internals.vertxVersion();
    assertTrue(version.matches("5\\.\\d+\\.\\d+.*"), version);
  }

  @Test
  void theProxyCodecIsFoundWhereItIsOnTheClassPath() {
    assertTrue(Internals.proxyCodecPresent(), "netty-codec-haproxy is a test dependency");
  }

  @Test
  void theTransportIsNamedAsOperatorsKnowIt() throws Exception {
    Vertx nio = Vertx.vertx();
    try {
      assertEquals("nio", Internals.transportName(nio));
    } finally {
      nio.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
    assumeTrue(Epoll.isAvailable(), "epoll is not available here");
    Vertx epoll = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));
    try {
      assertEquals("epoll", Internals.transportName(epoll));
    } finally {
      epoll.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }
}
