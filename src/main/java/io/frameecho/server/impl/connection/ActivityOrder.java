package io.frameecho.server.impl.connection;

import io.frameecho.server.CloseReason;
import io.frameecho.server.impl.connection.ReadPause.Reason;
import io.frameecho.server.impl.shared.Ticker;

import java.util.concurrent.TimeUnit;

/**
 * The connections of one event loop, least recently active first, as an intrusive list so that a touch and a look
 * at the front cost a few field writes. When {@code maxConnections} is reached, a newcomer evicts a connection near
 * the front that owes nothing and has been connected and quiet for {@code idleGiveWayMs}, so two newcomers cannot
 * evict each other and a client that sends now and then keeps its connection. One per server instance, on its loop.
 */
public final class ActivityOrder {

  /** How many connections from the front a newcomer looks at: a bound, not a scan. */
  static final int LOOK_AHEAD = 16;
  private final Ticker ticker;
  /** How long connected and quiet before a connection may be evicted. */
  final long giveWayAfterNanos;
  private final boolean givingWay;

  /** {@code giveWayAfterMs} is {@code idleGiveWayMs}; 0 disables eviction. */
  public ActivityOrder(Ticker ticker, long giveWayAfterMs) {
    this.ticker = ticker;
    this.giveWayAfterNanos = TimeUnit.MILLISECONDS.toNanos(giveWayAfterMs);
    this.givingWay = giveWayAfterMs > 0;
  }

  /** One connection's place in the order. */
  static final class Place {
    final Connection connection;
    private Place previous;
    private Place next;
    private boolean listed;
    /** Last activity and join time, on the {@link io.frameecho.server.impl.shared.Ticker}'s clock. */
    long activeNanos;
    long joinedNanos;

    Place(Connection connection) {
      this.connection = connection;
    }
  }

  private Place first;
  private Place last;
  private int size;

  void join(Place place) {
    touch(place);
    place.joinedNanos = place.activeNanos;
  }

  /** {@code place} was active just now: it goes to the end. */
  void touch(Place place) {
    place.activeNanos = ticker.nanoTime();
    if (last == place) {
      return;
    }
    if (place.listed) {
      unlink(place);
    }
    link(place);
  }

  private void link(Place place) {
    place.previous = last;
    place.next = null;
    if (last == null) {
      first = place;
    } else {
      last.next = place;
    }
    last = place;
    place.listed = true;
    size++;
  }

  void remove(Place place) {
    if (place.listed) {
      unlink(place);
    }
  }

  private void unlink(Place place) {
    if (place.previous == null) {
      first = place.next;
    } else {
      place.previous.next = place.next;
    }
    if (place.next == null) {
      last = place.previous;
    } else {
      place.next.previous = place.previous;
    }
    place.previous = place.next = null;
    place.listed = false;
    size--;
  }

  /** Whether eviction is enabled. */
  public boolean givesWay() {
    return givingWay;
  }

  /** {@link #idlest(long)} as of now. */
  public Connection idlest() {
    return idlest(ticker.nanoTime());
  }

  /**
   * The connection idle longest that could be evicted at {@code asOfNanos}, among at most {@link #LOOK_AHEAD} from the
   * front; null when none. A connection that owes something goes to the back, so a few busy ones at the front cannot
   * hide the idle ones behind them.
   */
  public Connection idlest(long asOfNanos) {
    if (!givingWay) {
      return null;
    }
    long nowNanos = asOfNanos;
    for (int looked = 0; first != null && looked < LOOK_AHEAD; looked++) {
      Place place = first;
      if (canGiveWay(place, nowNanos)) {
        return place.connection;
      }
      if (!place.connection.owesNothing()) {
        moveToBack(place);
      } else {
        // Too recently active, and so is everyone behind it that owes nothing.
        return null;
      }
    }
    return null;
  }

  /** Connected and quiet for {@code idleGiveWayMs}, and owing nothing (or gone while it waited for the budget). */
  private boolean canGiveWay(Place place, long nowNanos) {
    Connection connection = place.connection;
    return nowNanos - place.joinedNanos >= giveWayAfterNanos && nowNanos - place.activeNanos >= giveWayAfterNanos
      && (connection.owesNothing() || leftWhileWaitingForBudget(connection));
  }

  /**
   * Paused for the budget alone and its client gone: unread, it would keep its slot until the budget has room. Asks
   * the kernel, so only when a newcomer needs the slot.
   */
  private static boolean leftWhileWaitingForBudget(Connection connection) {
    return connection.reading.isPausedOnlyFor(Reason.OVER_BUFFER_BUDGET) && connection.owesNothingEvenIfPaused()
      && connection.socket.clientClosed();
  }

  /** Closes {@code connection} (with a FIN: it owes nothing) so a newcomer takes its slot. */
  public void giveWay(Connection connection) {
    connection.wantClose(CloseReason.IDLE_EVICTED);
  }

  /** True when {@code connection} was evicted for a newcomer. */
  public boolean gaveWay(Connection connection) {
    return connection.closeState().reason() == CloseReason.IDLE_EVICTED;
  }

  /** To the back, keeping its activity time: it was looked at, not active. */
  private void moveToBack(Place place) {
    if (last != place) {
      long activeNanos = place.activeNanos;
      unlink(place);
      link(place);
      place.activeNanos = activeNanos;
    }
  }

  public int size() {
    return size;
  }
}
