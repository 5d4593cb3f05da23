package io.frameecho.server;

import io.frameecho.server.impl.netty.ClusterView;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The cluster's members, read every {@value #POLL_MS} ms while event-bus requests are in flight, so that the requests
 * a departed node had do not wait for {@code timeoutMs}. Vert.x does not say which node a request went to: when a node
 * leaves, every request in flight then is {@linkplain Watched#nodeLeft told} on its own context, and so is every one
 * sent while Vert.x may still pick that node (the cluster manager still names it among the address's consumers, and a
 * grace after); each gives itself the grace to be answered.
 * <p>
 * <b>Threading:</b> requests come and go from any thread; the cluster is read on a worker (a cluster manager may block
 * there), one read after the other, so {@link #known} and {@link #departed} have one reader and writer at a time.
 */
final class MemberWatch {

  /** What the watch reads of the cluster. */
  interface Cluster {
    /** The members' node ids; may block. */
    Collection<String> members();

    /** The nodes with a consumer of {@code address}, as the cluster manager has them. */
    Future<Set<String>> consumerNodes(String address);
  }

  /** A request in flight. */
  interface Watched {
    /** Where it runs. */
    Context context();

    /** A node left while it was in flight: called on its context, once or more. */
    void nodeLeft();
  }

  static final long POLL_MS = 100;
  private static final Logger log = LoggerFactory.getLogger(MemberWatch.class);

  private final Vertx vertx;
  private final Cluster cluster;
  private final String address;
  private final long graceNanos;
  private final Set<Watched> inFlight = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean reading = new AtomicBoolean();
  /** The members at the last read, kept while nothing is in flight (a node that left meanwhile is noticed next time). */
  private volatile Set<String> known;
  /** Nodes that left and that the cluster manager still named among the address's consumers at the last look. */
  private volatile Set<String> departed = Set.of();
  /** Until then (System.nanoTime), a request sent is told at once: Vert.x may have picked a departed node. */
  private volatile long suspectUntilNanos = System.nanoTime();

  MemberWatch(Vertx vertx, Cluster cluster, String address, long graceMs) {
    this.vertx = vertx;
    this.cluster = cluster;
    this.address = address;
    this.graceNanos = graceMs * 1_000_000;
  }

  /** {@code vertx}'s cluster as its cluster manager sees it; null when it is not clustered. */
  static Cluster clusterOf(Vertx vertx) {
    ClusterView view = ClusterView.of(vertx);
    return view == null ? null : new Cluster() {
      @Override
      public Collection<String> members() {
        return view.members();
      }

      @Override
      public Future<Set<String>> consumerNodes(String address) {
        return view.consumerNodes(address);
      }
    };
  }

  /** {@code request} is in flight, from its context. */
  void add(Watched request) {
    inFlight.add(request);
    if (suspecting()) {
      request.nodeLeft();
    }
    if (reading.compareAndSet(false, true)) {
      read();
    }
  }

  /** {@code request} is answered (or failed). */
  void remove(Watched request) {
    inFlight.remove(request);
  }

  /** Vert.x may pick a departed node for a request sent now. */
  boolean suspecting() {
    return !departed.isEmpty() || System.nanoTime() - suspectUntilNanos < 0;
  }

  private void read() {
    Future<Set<String>> members;
    try {
      members = vertx.executeBlocking(() -> Set.copyOf(cluster.members()), false);
    } catch (RejectedExecutionException closing) {
      // Vert.x is closing: no more reads (the flag stays set).
      return;
    }
    members
      .compose(now -> {
        compare(now);
        // A manager that cannot say leaves the grace alone to cover the departed nodes.
        return departed.isEmpty() ? Future.succeededFuture() : cluster.consumerNodes(address)
          .onComplete(ar -> stillNamed(ar.succeeded() ? ar.result() : Set.of()));
      })
      .onComplete(ar -> {
        if (!inFlight.isEmpty()) {
          vertx.setTimer(POLL_MS, id -> read());
          return;
        }
        reading.set(false);
        // A request may have come between the look and the flag: it found the flag still set.
        if (!inFlight.isEmpty() && reading.compareAndSet(false, true)) {
          read();
        }
      });
  }

  private void compare(Set<String> now) {
    Set<String> before = known;
    known = now;
    if (before == null || now.containsAll(before)) {
      return;
    }
    Set<String> left = new HashSet<>(before);
    left.removeAll(now);
    Set<String> all = new HashSet<>(departed);
    all.addAll(left);
    departed = Collections.unmodifiableSet(all);
    suspectUntilNanos = System.nanoTime() + graceNanos;
    List<Watched> told = List.copyOf(inFlight);
    log.info("cluster node(s) {} left: the {} event-bus request(s) in flight get {} ms to be answered, then fail or are "
      + "sent again", left, told.size(), graceNanos / 1_000_000);
    for (Watched request : told) {
      request.context().runOnContext(v -> request.nodeLeft());
    }
  }

  /** Departed nodes the manager no longer names stop being suspects a grace later (Vert.x learns it a moment after). */
  private void stillNamed(Set<String> consumerNodes) {
    Set<String> still = new HashSet<>(departed);
    still.retainAll(consumerNodes);
    if (still.size() < departed.size()) {
      suspectUntilNanos = System.nanoTime() + graceNanos;
      departed = Collections.unmodifiableSet(still);
    }
  }
}
