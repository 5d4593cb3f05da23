package io.frameecho.server.impl.netty;

import io.frameecho.server.HandshakeFailure;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.net.ssl.SSLException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The upgrade holds reading until Vert.x has placed its TLS handler, and fails when Vert.x never does. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 30, timeUnit = TimeUnit.SECONDS)
class TlsUpgradeTest {

  @Test
  void readingStartsOnceTheTlsHandlerIsInPlace(Vertx vertx) {
    EmbeddedChannel channel = new EmbeddedChannel();
    Promise<Void> upgraded = Promise.promise();
    TlsUpgrade.gateReading(channel, vertx.getOrCreateContext(), upgraded);
    assertFalse(channel.config().isAutoRead(), "no ClientHello is read before the handler exists");
    // Vert.x's first write, from whose listener it places its handler.
    channel.pipeline().addLast(TlsUpgrade.TLS_HANDLER, new ChannelDuplexHandler());
    channel.writeAndFlush(Unpooled.EMPTY_BUFFER);
    channel.runPendingTasks();
    assertTrue(channel.config().isAutoRead());
    assertNull(channel.pipeline().get(TlsUpgrade.GATE), "the gate is gone after the one write");
    assertFalse(upgraded.future().isComplete(), "the handshake's outcome is Vert.x's to tell");
  }

  @Test
  void aWriteWithNoTlsHandlerPlacedFailsTheUpgrade(Vertx vertx) throws Exception {
    EmbeddedChannel channel = new EmbeddedChannel();
    Promise<Void> upgraded = Promise.promise();
    TlsUpgrade.gateReading(channel, vertx.getOrCreateContext(), upgraded);
    channel.writeAndFlush(Unpooled.EMPTY_BUFFER);
    channel.runPendingTasks();
    Throwable cause = upgraded.future().toCompletionStage().toCompletableFuture()
      .handle((v, e) -> e).get(10, TimeUnit.SECONDS);
    assertTrue(cause instanceof SSLException && cause.getMessage().startsWith("Vert.x could not create its TLS handler"),
      String.valueOf(cause));
    assertFalse(channel.config().isAutoRead());
  }

  @Test
  void aFailureIsCountedByItsCauseWhereverItIsInTheChain() {
    assertEquals(HandshakeFailure.TIMEOUT, TlsUpgrade.handshakeFailure(new SSLException(new SslHandshakeTimeoutException("t"))));
    assertEquals(HandshakeFailure.NOT_TLS, TlsUpgrade.handshakeFailure(new RuntimeException(new NotSslRecordException())));
    assertEquals(HandshakeFailure.FAILED, TlsUpgrade.handshakeFailure(new SSLException("bad certificate")));
    assertEquals(HandshakeFailure.FAILED, TlsUpgrade.handshakeFailure(null));
  }
}
