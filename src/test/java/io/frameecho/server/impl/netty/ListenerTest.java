package io.frameecho.server.impl.netty;

import io.netty.channel.embedded.EmbeddedChannel;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The listener stops accepting before shutdown, takes up again if others still share it, and is waited out unbound. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 30, timeUnit = TimeUnit.SECONDS)
class ListenerTest {

  @Test
  void stopsAcceptingOnItsEventLoopThenTellsTheServer(Vertx vertx) throws Exception {
    EmbeddedChannel listening = new EmbeddedChannel();
    Listener listener = new Listener(listening);
    var stopped = listener.stopAccepting(vertx.getOrCreateContext());
    assertTrue(listening.config().isAutoRead(), "on the listener's event loop, not the caller's");
    listening.runPendingTasks();
    assertFalse(listening.config().isAutoRead());
    stopped.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    listener.resumeIfOpen();
    listening.runPendingTasks();
    assertTrue(listening.config().isAutoRead(), "still open: another server shares it");
  }

  @Test
  void aClosedListenerIsNotResumed() {
    EmbeddedChannel listening = new EmbeddedChannel();
    listening.config().setAutoRead(false);
    listening.close();
    new Listener(listening).resumeIfOpen();
    listening.runPendingTasks();
    assertFalse(listening.config().isAutoRead());
  }

  @Test
  void theListenersAreUnboundAfterTwoPollsOfEachAcceptorLoop(Vertx vertx) throws Exception {
    Context context = vertx.getOrCreateContext();
    Listener.allUnbound(vertx, context).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }
}
