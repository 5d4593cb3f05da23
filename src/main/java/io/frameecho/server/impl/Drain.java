package io.frameecho.server.impl;

import io.frameecho.server.impl.connection.CloseState.Ending;

import io.vertx.core.Future;
import io.vertx.core.Promise;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * One server instance's open connections, and how they ended once shutdown began: drained (closed after their
 * answers), closed idle (owing nothing, and nothing lost), lost a request (one its client sent after the close was
 * decided, discarded unanswered), cut (answers or responses lost) or handed over (moved to a successor process owing
 * nothing, with {@code handoverSocket}). {@link #allClosed} completes once
 * shutdown has begun and the last one has closed. On the server's event loop only.
 *
 * @param <C> a connection
 */
final class Drain<C> {

  /** How a connection ended. */

  private final Set<C> open = new HashSet<>();
  private final Consumer<C> cut;
  private final Promise<Void> allClosed = Promise.promise();
  private boolean draining;
  private int drained;
  private int closedIdle;
  private int lostRequest;
  private int cutCount;
  private int handedOver;

  /** {@code cut} closes a connection at once, dropping what it still owes. */
  Drain(Consumer<C> cut) {
    this.cut = cut;
  }

  void opened(C connection) {
    open.add(connection);
  }

  /** {@code connection} has closed, {@code how}: counted once shutdown has begun. */
  void closed(C connection, Ending how) {
    open.remove(connection);
    if (draining) {
      switch (how) {
        case CUT -> cutCount++;
        case CLOSED_IDLE -> closedIdle++;
        case REQUEST_DISCARDED -> lostRequest++;
        case DRAINED -> drained++;
        case HANDED_OVER -> handedOver++;
      }
      completeIfEmpty();
    }
  }

  /** Shutdown has begun: from now on endings are counted. */
  void begin() {
    draining = true;
  }

  /** Whether shutdown has begun. */
  boolean draining() {
    return draining;
  }

  /** Completes {@link #allClosed} if no connection is open (once shutdown has begun and accepts have stopped). */
  void completeIfEmpty() {
    if (open.isEmpty()) {
      allClosed.tryComplete();
    }
  }

  /** Shutdown's deadline: every connection still open is cut. */
  void cutAll() {
    List.copyOf(open).forEach(cut);
  }

  Future<Void> allClosed() {
    return allClosed.future();
  }

  /** How the connections ended: drained, closed idle, lost a request, cut, handed over. */
  int[] counts() {
    return new int[] {drained, closedIdle, lostRequest, cutCount, handedOver};
  }

  /** For the shutdown line: {@code counts} in {@link #counts()}' order, of one server or of a deployment's. */
  static String summary(long[] counts) {
    return counts[0] + " connection(s) drained, " + counts[1] + " closed idle, " + counts[2] + " lost a request, "
      + counts[3] + " cut";
  }
}
