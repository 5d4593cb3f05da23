package io.frameecho.server.impl.shared;

import io.frameecho.server.HandshakeFailure;
import io.frameecho.server.Rejection;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.Shareable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the instances of one deployment share: the connection counts behind {@code maxConnections} and
 * {@code maxConnectionsPerIp}, and the {@link BufferBudget}. {@code -instances N} deploys N servers that
 * together are one server, so they find one another's limits in the Vert.x instance's local shared data,
 * under their deployment's id. Another deployment in the same Vert.x (another port, other options), or a
 * server created outside any deployment, has limits of its own.
 */
public final class ConnectionLimits implements Shareable {

  /** The logger name operators configure, kept from before the packages were split by threading rule. */
  private static final Logger log = LoggerFactory.getLogger("io.frameecho.server.impl.ConnectionLimits");
  /** The Vert.x instance's local map where a deployment's instances find their limits, by deployment id. */
  public static final String SHARED_MAP = "frame-echo.limits";
  private static final long LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final int maxConnections;
  private final int maxConnectionsPerIp;
  private final BufferBudget budget;
  private final AtomicInteger open = new AtomicInteger();
  private final ConcurrentHashMap<String, Integer> openPerIp = new ConcurrentHashMap<>();
  private final Summary rejections = new Summary();
  private final Summary gaveWay = new Summary();
  private final Map<HandshakeFailure, Summary> handshakesFailed = new EnumMap<>(HandshakeFailure.class);
  /** Servers using these limits; guarded by the shared map's compute. */
  private int servers;

  /** The deployment whose instances share these limits, or null for a server of its own. */
  private final String deployment;

  private ConnectionLimits(String deployment, int maxConnections, int maxConnectionsPerIp, BufferBudget budget) {
    this.deployment = deployment;
    this.maxConnections = maxConnections;
    this.maxConnectionsPerIp = maxConnectionsPerIp;
    this.budget = budget;
    for (HandshakeFailure why : HandshakeFailure.values()) {
      handshakesFailed.put(why, new Summary());
    }
  }

  /**
   * The limits of the deployment whose verticle is creating a server now (created by its first instance,
   * with its settings), or new limits of its own for a server created outside a deployment. Every call is
   * matched by one {@link #detach}.
   */
  public static ConnectionLimits attach(Vertx vertx, int maxConnections, int maxConnectionsPerIp, long maxBufferedBytes,
                                       int maxFrameSize, long budgetGraceMs) {
    String deployment = vertx.getOrCreateContext().deploymentID();
    if (deployment == null) {
      return new ConnectionLimits(null, maxConnections, maxConnectionsPerIp,
        new BufferBudget(maxBufferedBytes, maxFrameSize, budgetGraceMs, Ticker.of(vertx)));
    }
    return vertx.sharedData().<String, ConnectionLimits>getLocalMap(SHARED_MAP).compute(deployment, (k, limits) -> {
      ConnectionLimits attached = limits != null ? limits
        : new ConnectionLimits(deployment, maxConnections, maxConnectionsPerIp,
          new BufferBudget(maxBufferedBytes, maxFrameSize, budgetGraceMs, Ticker.of(vertx)));
      attached.servers++;
      return attached;
    });
  }

  /** A server using these limits has closed; the last one of its deployment removes them. */
  public void detach(Vertx vertx) {
    if (deployment != null) {
      vertx.sharedData().<String, ConnectionLimits>getLocalMap(SHARED_MAP)
        .computeIfPresent(deployment, (k, limits) -> limits == this && --limits.servers == 0 ? null : limits);
    }
  }

  public BufferBudget budget() {
    return budget;
  }

  /**
   * Counts a new connection from {@code ip}, or returns why it must be turned away (and counts nothing). Over
   * {@code maxConnections} the caller may make room ({@link #takeOver}) or turn it away ({@link #reject});
   * over {@code maxConnectionsPerIp} it is rejected here. Every {@code null} answer is matched by one
   * {@link #release}.
   */
  public Rejection tryAcquire(String ip) {
    if (maxConnections > 0 && open.incrementAndGet() > maxConnections) {
      open.decrementAndGet();
      return Rejection.MAX_CONNECTIONS;
    } else if (maxConnections == 0) {
      open.incrementAndGet();
    }
    if (!acquireForAddress(ip)) {
      open.decrementAndGet();
      return reject(Rejection.MAX_CONNECTIONS_PER_IP, ip);
    }
    return null;
  }

  /**
   * A connection gives its slot to a newcomer from {@code ip}: the newcomer has it if its address has room
   * ({@code null}), or is rejected. The newcomer's slot is matched by one {@link #release}, the giver's by
   * {@link #releaseAddress}.
   */
  public Rejection takeOver(String ip) {
    return acquireForAddress(ip) ? null : reject(Rejection.MAX_CONNECTIONS_PER_IP, ip);
  }

  private boolean acquireForAddress(String ip) {
    if (maxConnectionsPerIp <= 0) {
      return true;
    }
    boolean[] over = {false};
    openPerIp.compute(ip, (k, n) -> {
      int count = n == null ? 0 : n;
      over[0] = count >= maxConnectionsPerIp;
      return over[0] ? n : Integer.valueOf(count + 1);
    });
    return !over[0];
  }

  public void release(String ip) {
    open.decrementAndGet();
    releaseAddress(ip);
  }

  /** A connection that gave its slot to a newcomer closed: only its address's count is released. */
  public void releaseAddress(String ip) {
    if (maxConnectionsPerIp > 0) {
      openPerIp.computeIfPresent(ip, (k, n) -> n == 1 ? null : n - 1);
    }
  }

  /** Counts a rejection and logs one line a second at most, with how many were turned away since. */
  public Rejection reject(Rejection why, String ip) {
    Summary.Line line = rejections.count();
    if (line != null) {
      log.warn("rejected {} connection(s) in the last {} ms, the latest from {}: over {} ({})",
        line.count(), line.windowMs(), ip, why.key(),
        why == Rejection.MAX_CONNECTIONS ? maxConnections : maxConnectionsPerIp);
    }
    return why;
  }

  /** Counts an idle connection closed for a newcomer from {@code ip}, and logs one line a second at most. */
  public void gaveWay(String ip) {
    Summary.Line line = gaveWay.count();
    if (line != null) {
      log.info("closed {} idle connection(s) for newcomers in the last {} ms, the latest for {}: every slot of "
        + "maxConnections ({}) was taken", line.count(), line.windowMs(), ip, maxConnections);
    }
  }

  /**
   * Counts a TLS handshake from {@code ip} that did not complete, and logs one line a second at most per cause, with
   * how many failed for it since; {@code detail} says what happened to the latest.
   */
  public void handshakeFailed(HandshakeFailure why, String ip, String detail) {
    Summary.Line line = handshakesFailed.get(why).count();
    if (line != null) {
      log.info("{} TLS handshake(s) failed ({}) in the last {} ms, the latest from {}: {}", line.count(), why.tag(),
        line.windowMs(), ip, detail);
    }
  }

  /**
   * Events of one kind, summarised in a log line a second at most: the first at once, then how many came since
   * the previous line. Called from any event loop.
   */
  private static final class Summary {

    /** A line due: {@code count} events over the last {@code windowMs}. */
    record Line(long count, long windowMs) {
    }

    /** When counting began: the first line's window starts here. */
    private final long startNanos = System.nanoTime();
    private final AtomicLong since = new AtomicLong();
    /** The previous line, a full interval back at first so that the first one is written at once. */
    private final AtomicLong lastNanos = new AtomicLong(startNanos - LOG_INTERVAL_NANOS);

    /** Counts one; the line to write now, or null when the previous one was less than a second ago. */
    Line count() {
      since.incrementAndGet();
      long now = System.nanoTime();
      long last = lastNanos.get();
      if (now - last < LOG_INTERVAL_NANOS || !lastNanos.compareAndSet(last, now)) {
        return null;
      }
      return new Line(since.getAndSet(0), TimeUnit.NANOSECONDS.toMillis(now - Math.max(last, startNanos)));
    }
  }

  public int openConnections() {
    return open.get();
  }
}
