package io.frameecho.server.impl;

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
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The cluster's members, read every {@value #POLL_MS} ms while event-bus requests are in flight, so that the requests
 * a departed node had do not wait for {@code timeoutMs}, and every {@value #IDLE_POLL_MS} ms otherwise while a server
 * {@linkplain #watchIdle watches}, so that readiness learns of a lost consumer without a request failing first. Vert.x
 * does not say which node a request went to: when a node leaves, every request in flight then is
 * {@linkplain Watched#nodeLeft told} on its own context, and gives itself the grace to be answered. While the cluster
 * manager still names the departed node among the address's consumers, Vert.x may pick it: a new request waits until a
 * look after the manager has dropped it (at most {@code maxWaitMs}), and is then {@linkplain Watched#send sent}; one
 * sent within a grace after is told too. Once dropped, the departed nodes are {@linkplain #watchIdle reported}, so the
 * handler asks whether the address still has a consumer.
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

    /** It waited while Vert.x could pick a departed node: send it now (called on its context). */
    void send();
  }

  static final long POLL_MS = 100;
  static final long IDLE_POLL_MS = 1000;
  private static final Logger log = LoggerFactory.getLogger(MemberWatch.class);

  private final Vertx vertx;
  private final Cluster cluster;
  private final String address;
  private final long graceNanos;
  private final long maxWaitNanos;
  /** Requests not sent yet: a departed node may still be picked. */
  private final ConcurrentLinkedQueue<Watched> waiting = new ConcurrentLinkedQueue<>();
  private final Set<Watched> inFlight = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean reading = new AtomicBoolean();
  /** Told once departed nodes are dropped, while a server watches; null otherwise. */
  private volatile Runnable onDropped;
  /** The pending idle look's timer, or -1: a request that comes meanwhile has it read at once. */
  private volatile long idleTimer = -1;
  /** The members at the last read (a node that left between two reads is noticed at the second). */
  private volatile Set<String> known;
  /** Nodes that left and that the cluster manager still named among the address's consumers at the last look. */
  private volatile Set<String> departed = Set.of();
  /** When the first of the departed nodes left; and whether the last look found the manager naming none of them. */
  private long departedSinceNanos;
  private boolean droppedAtLastLook;
  /** Until then (System.nanoTime), a request sent is told at once: Vert.x may have picked a departed node. */
  private volatile long suspectUntilNanos = System.nanoTime();

  MemberWatch(Vertx vertx, Cluster cluster, String address, long graceMs, long maxWaitMs) {
    this.vertx = vertx;
    this.cluster = cluster;
    this.address = address;
    this.graceNanos = graceMs * 1_000_000;
    this.maxWaitNanos = maxWaitMs * 1_000_000;
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

  /** {@code request} is about to be sent, from its context: false when it must wait to be {@linkplain Watched#send sent}. */
  boolean add(Watched request) {
    inFlight.add(request);
    boolean now = departed.isEmpty();
    if (!now) {
      waiting.add(request);
      if (departed.isEmpty()) {
        // The look that emptied departed may have released the waiting before this one joined them.
        releaseWaiting();
      }
    }
    if (reading.compareAndSet(false, true)) {
      read();
    } else {
      hurry();
    }
    return now;
  }

  /**
   * Reads the members while nothing is in flight too, until {@link #stop}, and runs {@code onDropped} (on a worker or
   * a Vert.x context) each time departed nodes are dropped. Once; a later call only replaces {@code onDropped}.
   */
  void watchIdle(Runnable onDropped) {
    this.onDropped = onDropped;
    if (reading.compareAndSet(false, true)) {
      read();
    }
  }

  /** No more idle looks (the server has closed); requests in flight are still watched. */
  void stop() {
    onDropped = null;
    long timer = idleTimer;
    if (timer != -1 && vertx.cancelTimer(timer)) {
      idleTimer = -1;
      next();
    }
  }

  /** The idle look, if one is pending, now. */
  private void hurry() {
    long timer = idleTimer;
    if (timer != -1 && vertx.cancelTimer(timer)) {
      idleTimer = -1;
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
      .onComplete(ar -> next());
  }

  /** After a look: the next one soon, later while idle and watched, or none (the flag cleared). */
  private void next() {
    if (!inFlight.isEmpty() || !departed.isEmpty()) {
      vertx.setTimer(POLL_MS, id -> read());
      return;
    }
    if (onDropped != null) {
      idleTimer = vertx.setTimer(IDLE_POLL_MS, id -> {
        idleTimer = -1;
        read();
      });
      // A request, or stop(), may have come before the timer was known: it could not cancel it.
      if (!inFlight.isEmpty() || onDropped == null) {
        hurry();
      }
      return;
    }
    reading.set(false);
    // A request may have come between the look and the flag: it found the flag still set.
    if (!inFlight.isEmpty() && reading.compareAndSet(false, true)) {
      read();
    }
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
    if (departed.isEmpty()) {
      departedSinceNanos = System.nanoTime();
    }
    droppedAtLastLook = false;
    departed = Collections.unmodifiableSet(all);
    suspectUntilNanos = System.nanoTime() + graceNanos;
    List<Watched> told = List.copyOf(inFlight);
    if (told.isEmpty()) {
      log.info("cluster node(s) {} left, no event-bus request in flight", left);
    } else {
      log.info("cluster node(s) {} left: the {} event-bus request(s) in flight get {} ms to be answered, then fail or are "
        + "sent again", left, told.size(), graceNanos / 1_000_000);
    }
    for (Watched request : told) {
      request.context().runOnContext(v -> request.nodeLeft());
    }
  }

  /**
   * Once the manager names none of the departed nodes at two looks in a row (Vert.x learns it a moment after the
   * manager), or they left {@code maxWaitMs} ago, they are forgotten and the waiting requests sent; those sent within a
   * grace after are told.
   */
  private void stillNamed(Set<String> consumerNodes) {
    boolean dropped = Collections.disjoint(departed, consumerNodes);
    if ((dropped && droppedAtLastLook) || System.nanoTime() - departedSinceNanos > maxWaitNanos) {
      suspectUntilNanos = System.nanoTime() + graceNanos;
      departed = Set.of();
      releaseWaiting();
      Runnable report = onDropped;
      if (report != null) {
        report.run();
      }
    }
    droppedAtLastLook = dropped;
  }

  private void releaseWaiting() {
    Watched request;
    while ((request = waiting.poll()) != null) {
      Watched next = request;
      next.context().runOnContext(v -> next.send());
    }
  }
}
