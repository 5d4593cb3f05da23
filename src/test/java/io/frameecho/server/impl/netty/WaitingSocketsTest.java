package io.frameecho.server.impl.netty;

import io.frameecho.testkit.VirtualTicker;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Sockets wait unread for a timer (which Netty runs only after a poll of the sockets that follows the timer's
 * setting), then are decided in arrival order, reading again; a timer decides only those who were waiting when it was
 * set; a socket whose client left is never decided. Real Vert.x sockets, a virtual clock driven on their event loop.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 30, timeUnit = TimeUnit.SECONDS)
class WaitingSocketsTest {

  private final VirtualTicker ticker = new VirtualTicker();
  private final List<String> decided = new ArrayList<>();
  /** The accepted sockets, in arrival order, named a, b, c... */
  private final List<NetSocket> accepted = new ArrayList<>();
  private final List<Socket> clients = new ArrayList<>();
  private WaitingSockets waiting;
  private NetServer server;
  private Context context;

  @BeforeEach
  void listen(Vertx vertx) throws Exception {
    context = vertx.getOrCreateContext();
    waiting = new WaitingSockets(ticker, (socket, ip, arrivedNanos) -> decided.add(name(socket) + "@" + arrivedNanos));
    server = vertx.createNetServer().connectHandler(socket -> {
      accepted.add(socket);
      waiting.add(socket, "127.0.0.1");
    });
    CompletableFuture<NetServer> listening = new CompletableFuture<>();
    context.runOnContext(v -> server.listen(0, "127.0.0.1").onComplete(ar -> {
      if (ar.succeeded()) {
        listening.complete(ar.result());
      } else {
        listening.completeExceptionally(ar.cause());
      }
    }));
    listening.get(10, TimeUnit.SECONDS);
  }

  @AfterEach
  void close() throws Exception {
    for (Socket client : clients) {
      client.close();
    }
    server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private String name(NetSocket socket) {
    return String.valueOf((char) ('a' + accepted.indexOf(socket)));
  }

  /** Runs {@code task} on the server's event loop, where the sockets and the ticker live, and returns its result. */
  private <T> T onLoop(Supplier<T> task) throws Exception {
    CompletableFuture<T> result = new CompletableFuture<>();
    context.runOnContext(v -> {
      try {
        result.complete(task.get());
      } catch (Throwable e) {
        result.completeExceptionally(e);
      }
    });
    return result.get(10, TimeUnit.SECONDS);
  }

  /** A client connects; returns once its socket waits. */
  private void connect() throws Exception {
    int before = onLoop(() -> accepted.size());
    Socket client = new Socket();
    clients.add(client);
    client.connect(new InetSocketAddress("127.0.0.1", server.actualPort()), 10_000);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (onLoop(() -> accepted.size()) == before) {
      assertTrue(System.nanoTime() < deadline, "the connect was never accepted");
      Thread.sleep(5);
    }
  }

  private boolean reading(int index) throws Exception {
    return onLoop(() -> Sockets.channelOf(accepted.get(index)).config().isAutoRead());
  }

  @Test
  void aHeldChannelReadsNothingUntilItIsLetGo() {
    EmbeddedChannel channel = new EmbeddedChannel();
    channel.pipeline().addLast("handler", new ChannelInboundHandlerAdapter());
    WaitingSockets.hold(channel);
    assertFalse(channel.config().isAutoRead());
    assertTrue(channel.pipeline().get(WaitingSockets.HELD) != null);
    WaitingSockets.readAgain(channel);
    assertTrue(channel.config().isAutoRead());
    assertNull(channel.pipeline().get(WaitingSockets.HELD));
  }

  @Test
  void aTimerDecidesThoseWaitingWhenItWasSetWithTheirArrivalTimes() throws Exception {
    long first = ticker.nanoTime();
    connect();
    assertFalse(reading(0), "held unread while it waits");
    assertEquals(List.of(), onLoop(() -> List.copyOf(decided)), "nothing decided before the timer");
    assertEquals(1, (int) onLoop(() -> ticker.pending()));
    onLoop(() -> {
      ticker.advance(1);
      return null;
    });
    assertEquals(List.of("a@" + first), onLoop(() -> List.copyOf(decided)));
    assertTrue(reading(0), "decided for: it reads again");
    assertEquals(0, (int) onLoop(() -> waiting.size()));
    assertEquals(0, (int) onLoop(() -> ticker.pending()), "no timer while nobody waits");
  }

  @Test
  void aSocketWhoArrivesAfterTheTimerWasSetWaitsForTheNextOne() throws Exception {
    long first = ticker.nanoTime();
    connect();
    // Arrives while a's timer is pending: that timer may run in the same batch, before any poll after b arrived.
    connect();
    assertEquals(1, (int) onLoop(() -> ticker.pending()), "one timer at a time");
    onLoop(() -> {
      ticker.advance(1);
      return null;
    });
    assertEquals(List.of("a@" + first), onLoop(() -> List.copyOf(decided)));
    assertEquals(1, (int) onLoop(() -> waiting.size()));
    assertFalse(reading(1));
    onLoop(() -> {
      ticker.advance(1);
      return null;
    });
    assertEquals(List.of("a@" + first, "b@" + first), onLoop(() -> List.copyOf(decided)), "b in a timer set after it arrived");
    assertEquals(0, (int) onLoop(() -> waiting.size()));
  }

  @Test
  void aSocketClosedWhileItWaitedIsNeverDecided() throws Exception {
    connect();
    // Closed on the loop: a held socket reads nothing, so a client's FIN or reset shows only once it is read.
    onLoop(() -> {
      accepted.get(0).close();
      ticker.advance(1);
      return null;
    });
    assertEquals(List.of(), onLoop(() -> List.copyOf(decided)));
    assertEquals(0, (int) onLoop(() -> waiting.size()));
  }

  @Test
  void whenTheServerStopsThoseWaitingAreTurnedAwayAndNeverDecided() throws Exception {
    connect();
    connect();
    List<String> turnedAway = onLoop(() -> {
      List<String> away = new ArrayList<>();
      waiting.turnAway((socket, ip, arrivedNanos) -> away.add(name(socket) + " from " + ip));
      return away;
    });
    assertEquals(List.of("a from 127.0.0.1", "b from 127.0.0.1"), turnedAway);
    assertTrue(reading(0) && reading(1), "turned away: they read again, to be refused");
    assertEquals(0, (int) onLoop(() -> ticker.pending()), "the timer is cancelled");
    onLoop(() -> {
      ticker.advance(10);
      return null;
    });
    assertEquals(List.of(), onLoop(() -> List.copyOf(decided)));
    connect();
    onLoop(() -> {
      ticker.advance(1);
      return null;
    });
    assertEquals(1, (int) onLoop(() -> decided.size()), "a socket after that has a timer of its own");
  }

  @Test
  void whenTheServerClosesThoseWaitingAreForgottenStillHeld() throws Exception {
    connect();
    onLoop(() -> {
      waiting.forget();
      return null;
    });
    assertEquals(0, (int) onLoop(() -> ticker.pending()), "the timer is cancelled");
    onLoop(() -> {
      ticker.advance(10);
      return null;
    });
    assertEquals(List.of(), onLoop(() -> List.copyOf(decided)));
    assertFalse(reading(0), "Vert.x closes it with the others");
  }
}
