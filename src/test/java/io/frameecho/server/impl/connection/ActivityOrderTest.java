package io.frameecho.server.impl.connection;

import io.frameecho.server.impl.connection.EchoHandler;
import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.impl.shared.BufferBudget;
import io.frameecho.server.impl.shared.LogSummary;
import io.frameecho.testkit.VirtualTicker;
import io.vertx.core.net.SocketAddress;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static io.frameecho.server.impl.connection.Wire.frame;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

/** The order in which connections give way to newcomers: the least recently active first, looked for near the front only. */
class ActivityOrderTest {

  private static final long GIVE_WAY_MS = 1000;
  private final VirtualTicker ticker = new VirtualTicker();
  private final ActivityOrder order = new ActivityOrder(ticker, GIVE_WAY_MS);
  private final FrameEchoOptions options = new FrameEchoOptions().setIdleTimeoutMs(0).setFrameTimeoutMs(0)
    .setWriteStallTimeoutMs(0);
  private final BufferBudget budget = new BufferBudget(1 << 20, 1000, ticker);
  private final Wire.Reads reads = new Wire.Reads();
  private final List<Connection> connections = new ArrayList<>();

  private Connection connect() {
    Connection connection = new Connection(SocketAddress.inetSocketAddress(1000 + connections.size(), "127.0.0.1"),
      options, FrameEchoMetrics.NONE, new LogSummary(ticker), order, c -> { });
    connection.start(new FakeSocket(), new EchoHandler(), budget, Runnable::run, ticker);
    connections.add(connection);
    return connection;
  }

  @AfterEach
  void closeAll() {
    connections.forEach(Connection::closed);
    reads.assertReleased();
    assertEquals(0, order.size());
  }

  @Test
  void theLeastRecentlyActiveGivesWayFirst() {
    Connection a = connect();
    Connection b = connect();
    Connection c = connect();
    ticker.advance(500);
    a.bytes(reads.read(frame("a")));
    b.bytes(reads.read(frame("b")));
    ticker.advance(GIVE_WAY_MS);
    assertSame(c, order.idlest());
    order.giveWay(c);
    assertSame(a, order.idlest(), "then the one active longest ago");
    a.bytes(reads.read(frame("a again")));
    assertSame(b, order.idlest());
  }

  @Test
  void busyConnectionsAtTheFrontGoToTheBackSoTheNextNewcomerFindsTheIdleOnes() {
    List<Connection> busy = new ArrayList<>();
    for (int i = 0; i < ActivityOrder.LOOK_AHEAD; i++) {
      Connection connection = connect();
      // Half a frame: each owes the rest, so none can give way.
      connection.bytes(reads.read(new byte[] {10, 0, 0, 0, 1}));
      busy.add(connection);
    }
    Connection idle = connect();
    ticker.advance(10 * GIVE_WAY_MS);
    assertNull(order.idlest(), "the idle one is past the first " + ActivityOrder.LOOK_AHEAD + " looked at");
    assertSame(idle, order.idlest(), "the busy ones looked at went to the back");
    assertEquals(ActivityOrder.LOOK_AHEAD + 1, order.size());
  }

  @Test
  void aConnectionQuietForLessThanTheMinimumEndsTheLook() {
    Connection a = connect();
    ticker.advance(GIVE_WAY_MS - 1);
    connect();
    assertNull(order.idlest());
    ticker.advance(1);
    assertSame(a, order.idlest());
    assertSame(a, order.idlest(), "looking moves nothing that owes nothing");
  }

  @Test
  void asOfANewcomersArrivalOnlyThoseQuietSinceBeforeItGiveWay() {
    Connection a = connect();
    Connection b = connect();
    ticker.advance(2 * GIVE_WAY_MS);
    long arrived = ticker.nanoTime();
    // After the newcomer arrived, the loop reads what a's client had sent while it lagged.
    ticker.advance(5);
    a.bytes(reads.read(frame("sent while the loop lagged")));
    assertSame(b, order.idlest(arrived), "quiet since before the newcomer arrived");
    order.giveWay(b);
    assertNull(order.idlest(arrived), "a was active after the arrival: not quiet as of it");
    ticker.advance(GIVE_WAY_MS);
    assertNull(order.idlest(arrived), "as of the arrival it still was not");
    assertSame(a, order.idlest(), "for a newcomer arriving now it is");
  }
}
