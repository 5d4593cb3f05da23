package io.frameecho.server.impl.connection;

import io.frameecho.server.CloseReason;
import io.frameecho.server.impl.connection.ReadGate.Reason;
import io.frameecho.server.impl.shared.Ticker;

import java.util.concurrent.TimeUnit;

/**
 * The connections of one event loop from the least to the most recently active: an intrusive list, so that
 * moving a connection to the end after a read costs a few field writes, and finding the one idle longest costs
 * a look at the front. When every slot of {@code maxConnections} is taken, a newcomer takes the slot of the
 * first connection near the front that can give way: connected and quiet for {@code idleGiveWayMs} at least, so
 * that two newcomers cannot evict each other and a client that sends now and then keeps its connection, and owing
 * nothing ({@link #canGiveWay}); it then closes, its slot the newcomer's ({@link #giveWay}). One per server instance,
 * on its event loop.
 */
public final class ActivityOrder {

  /** How far from the front a newcomer looks for a connection that can give way: a bound, not a scan. */
  static final int LOOK_AHEAD = 16;
  private final Ticker ticker;
  /** How long connected and quiet before giving way; never when 0. */
  final long giveWayAfterNanos;
  private final boolean givingWay;

  /** {@code giveWayAfterMs} is {@code idleGiveWayMs}: 0 = no connection ever gives way. */
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
    /** When the connection was last active, and when it joined, on the {@link io.frameecho.server.impl.shared.Ticker}'s clock. */
    long activeNanos;
    long joinedNanos;

    Place(Connection connection) {
      this.connection = connection;
    }
  }

  private Place first;
  private Place last;
  private int size;

  /** {@code place}'s connection has just been accepted: it takes its place at the end. */
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

  /** {@code place}'s connection closed, or is closing: it leaves the order. */
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

  /** Whether a connection ever gives way ({@code idleGiveWayMs} above 0). */
  public boolean givesWay() {
    return givingWay;
  }

  /** The connection idle longest that can give way now: {@link #idlest(long)} as of now. */
  public Connection idlest() {
    return idlest(ticker.nanoTime());
  }

  /**
   * The connection idle longest that could give way at {@code asOfNanos}: quiet from before that time on, by the
   * reads processed so far. Looks at no more than {@link #LOOK_AHEAD} connections from the front; null when none
   * can. A connection looked at that owes something (a frame under way, an answer awaited, responses queued) goes
   * to the back as it is, so that a few busy connections at the front cannot hide the idle ones behind them from
   * every newcomer.
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
        // Quiet for less than idleGiveWayMs: so is everyone behind it that owes nothing.
        return null;
      }
    }
    return null;
  }

  /**
   * Whether {@code place}'s connection may close to make room for a newcomer at {@code nowNanos}: connected and quiet
   * for {@code idleGiveWayMs} at least, and owing nothing (or gone while it waited for the budget).
   */
  private boolean canGiveWay(Place place, long nowNanos) {
    Connection connection = place.connection;
    return nowNanos - place.joinedNanos >= giveWayAfterNanos && nowNanos - place.activeNanos >= giveWayAfterNanos
      && (connection.owesNothing() || leftWhileWaitingForBudget(connection));
  }

  /**
   * Paused for the budget alone, owing nothing else, its client gone: unread, {@code connection} would keep its slot
   * until the budget has room. Asks the kernel, so only when a newcomer needs the slot.
   */
  private static boolean leftWhileWaitingForBudget(Connection connection) {
    Reading reading = connection.reading;
    return reading.isPausedFor(Reason.OVER_BUFFER_BUDGET) && !reading.isPausedForOtherThan(Reason.OVER_BUFFER_BUDGET)
      && connection.owesNothingWhateverTheGate() && connection.socket.clientClosed();
  }

  /** Closes {@code connection} to make room for a newcomer, which takes its slot: a FIN, as it owes nothing. */
  public void giveWay(Connection connection) {
    connection.closeAfterAnswers(CloseReason.IDLE_EVICTED);
  }

  /** True when {@code connection} closed to make room for a newcomer: its slot went to the newcomer. */
  public boolean gaveWay(Connection connection) {
    return connection.closeState().reason() == CloseReason.IDLE_EVICTED;
  }

  /** To the back without a new activity time: it was looked at, not active. */
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
