package io.frameecho.server.impl.shared;

import io.frameecho.server.HandshakeFailure;
import io.frameecho.server.Rejection;
import io.vertx.core.Vertx;
import io.vertx.core.net.SocketAddress;
import io.vertx.core.shareddata.Shareable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.slf4j.event.Level;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The connection counts and {@link BufferBudget} shared by one deployment's instances, which together act as one
 * server; found in Vert.x local shared data under the deployment id. A server outside a deployment has its own.
 */
public final class ConnectionLimits implements Shareable {

  /** Kept at its old name because operators configure it. */
  private static final Logger log = LoggerFactory.getLogger("io.frameecho.server.impl.ConnectionLimits");
  /** The local map holding each deployment's limits, by deployment id. */
  public static final String SHARED_MAP = "frame-echo.limits";

  private final int maxConnections;
  private final int maxConnectionsPerIp;
  private final BufferBudget budget;
  private final AtomicInteger open = new AtomicInteger();
  private final ConcurrentHashMap<String, Integer> openPerIp = new ConcurrentHashMap<>();
  private final LogSummary logSummary;
  private final Map<Rejection, LogSummary.Cause> rejections = new EnumMap<>(Rejection.class);
  private final LogSummary.Cause gaveWay;
  private final Map<HandshakeFailure, LogSummary.Cause> handshakesFailed = new EnumMap<>(HandshakeFailure.class);
  /** Guarded by the shared map's compute. */
  private int servers;
  /** Connection endings at shutdown, summed over the instances. */
  private final long[] endings = new long[5];
  /** Negative ports, each a shared random port to Vert.x; far below the -1 applications use. */
  private static final AtomicInteger RANDOM_PORTS = new AtomicInteger(-(1 << 24));
  /** This deployment's shared random ports; 0 for a server of its own. */
  private final int sharedRandomPort;
  private final int sharedEntryPort;
  /** Null for a server of its own. */
  private final String deployment;

  private ConnectionLimits(String deployment, int maxConnections, int maxConnectionsPerIp, BufferBudget budget,
                           Ticker ticker) {
    this.deployment = deployment;
    this.sharedRandomPort = deployment == null ? 0 : RANDOM_PORTS.decrementAndGet();
    this.sharedEntryPort = deployment == null ? 0 : RANDOM_PORTS.decrementAndGet();
    this.maxConnections = maxConnections;
    this.maxConnectionsPerIp = maxConnectionsPerIp;
    this.budget = budget;
    logSummary = new LogSummary(ticker);
    for (Rejection why : Rejection.values()) {
      rejections.put(why, logSummary.cause(why, log, Level.WARN, "rejected {} more connection(s) in the last {} ms, the latest from {}: over "
        + why.key() + " (" + (why == Rejection.MAX_CONNECTIONS ? maxConnections : maxConnectionsPerIp) + ")"));
    }
    gaveWay = logSummary.cause("gave way", log, Level.INFO, "closed {} more idle connection(s) for newcomers in the last {} ms, the latest "
      + "for {}: every slot of maxConnections (" + maxConnections + ") was taken");
    for (HandshakeFailure why : HandshakeFailure.values()) {
      handshakesFailed.put(why, logSummary.cause(why, log, Level.INFO, "{} more " + why.what() + "(s) failed (" + why.tag()
        + ") in the last {} ms, the latest from {}"));
    }
  }

  private static ConnectionLimits create(Vertx vertx, String deployment, int maxConnections, int maxConnectionsPerIp,
                                         long maxBufferedBytes, long budgetGraceMs) {
    Ticker ticker = Ticker.of(vertx);
    return new ConnectionLimits(deployment, maxConnections, maxConnectionsPerIp,
      new BufferBudget(maxBufferedBytes, budgetGraceMs, ticker), ticker);
  }

  /** The current deployment's limits, or new ones outside a deployment; each call is matched by one {@link #detach}. */
  public static ConnectionLimits attach(Vertx vertx, int maxConnections, int maxConnectionsPerIp, long maxBufferedBytes,
                                       long budgetGraceMs) {
    String deployment = vertx.getOrCreateContext().deploymentID();
    if (deployment == null) {
      return create(vertx, null, maxConnections, maxConnectionsPerIp, maxBufferedBytes, budgetGraceMs);
    }
    return vertx.sharedData().<String, ConnectionLimits>getLocalMap(SHARED_MAP).compute(deployment, (k, limits) -> {
      ConnectionLimits attached = limits != null ? limits
        : create(vertx, deployment, maxConnections, maxConnectionsPerIp, maxBufferedBytes, budgetGraceMs);
      attached.servers++;
      return attached;
    });
  }

  /**
   * Detaches a closed server; the last one of a deployment removes the limits. Flushes pending summaries now, since
   * their timers may belong to the closing server's context.
   */
  public void detach(Vertx vertx) {
    detach(vertx, null);
  }

  /**
   * As {@link #detach(Vertx)}, adding this server's connection endings {@code counts}; returns the deployment's totals
   * when this was the last server, else null. The count changes only in the map's compute, so "last" is decided once.
   */
  public long[] detach(Vertx vertx, int[] counts) {
    logSummary.flush();
    if (counts != null) {
      synchronized (endings) {
        for (int i = 0; i < endings.length; i++) {
          endings[i] += counts[i];
        }
      }
    }
    boolean[] last = {deployment == null};
    if (deployment != null) {
      vertx.sharedData().<String, ConnectionLimits>getLocalMap(SHARED_MAP).computeIfPresent(deployment, (k, limits) -> {
        if (limits != this) {
          return limits;
        }
        last[0] = --limits.servers == 0;
        return last[0] ? null : limits;
      });
    }
    if (!last[0]) {
      return null;
    }
    synchronized (endings) {
      return endings.clone();
    }
  }

  /** The shared random port for a deployment asked for port 0; 0 for a server of its own. */
  public int randomPort() {
    return sharedRandomPort;
  }

  /** As {@link #randomPort()}, for the handover's loopback entry. */
  public int entryPort() {
    return sharedEntryPort;
  }

  /** The deployment's buffer budget. */
  public BufferBudget budget() {
    return budget;
  }

  /** The deployment's rate limits on log lines, which its connections' close lines share. */
  public LogSummary logSummary() {
    return logSummary;
  }

  /** Rate-limited rejection lines for {@code why}. */
  public LogSummary.Cause rejectionLog(Rejection why) {
    return rejections.get(why);
  }

  /** Rate-limited lines about idle connections closed for newcomers. */
  public LogSummary.Cause gaveWayLog() {
    return gaveWay;
  }

  /** The key of a client's per-address limit: its IP address; every unix-socket peer shares {@code "unix"}. */
  public static String addressKey(SocketAddress remote) {
    return remote == null ? "unknown" : remote.isDomainSocket() ? "unix"
      : remote.hostAddress() != null ? remote.hostAddress() : remote.toString();
  }

  /**
   * Counts a new connection, or returns why it must be refused. Over {@code maxConnections} the caller may
   * {@link #takeOver} or {@link #reject}; every {@code null} answer is matched by one {@link #release}.
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

  /** Gives an evicted connection's slot to a newcomer from {@code ip}, unless its address is over its limit. */
  public Rejection takeOver(String ip) {
    return acquireForAddress(ip) ? null : reject(Rejection.MAX_CONNECTIONS_PER_IP, ip);
  }

  /** A null {@code ip} (PROXY header not read yet) is counted later. */
  private boolean acquireForAddress(String ip) {
    if (maxConnectionsPerIp <= 0 || ip == null) {
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

  /** Releases a closed connection's slot and its address's count. */
  public void release(String ip) {
    release(ip, false);
  }

  /** As {@link #release(String)}, but keeps the slot if it {@code gaveWay} to a newcomer. */
  public void release(String ip, boolean gaveWay) {
    if (!gaveWay) {
      open.decrementAndGet();
    }
    releaseAddress(ip);
  }

  private void releaseAddress(String ip) {
    if (maxConnectionsPerIp > 0 && ip != null) {
      openPerIp.computeIfPresent(ip, (k, n) -> n == 1 ? null : n - 1);
    }
  }

  /** Counts a rejection; logs the first ones, then one summary a second at most. */
  public Rejection reject(Rejection why, String ip) {
    if (rejections.get(why).logNow(ip)) {
      log.warn("rejected a connection from {}: over {} ({})", ip == null ? "a proxied client (before its header)" : ip, why.key(),
        why == Rejection.MAX_CONNECTIONS ? maxConnections : maxConnectionsPerIp);
    }
    return why;
  }

  /** Counts an idle connection closed for a newcomer; logged, then summarised. */
  public void gaveWay(String ip) {
    if (gaveWay.logNow(ip)) {
      log.info("closed an idle connection for a newcomer from {}: every slot of maxConnections ({}) was taken", ip,
        maxConnections);
    }
  }

  /** Counts a failed TLS handshake; logs the first ones with {@code detail}, then summarises per cause. */
  public void handshakeFailed(HandshakeFailure why, String ip, String detail) {
    if (handshakesFailed.get(why).logNow(ip)) {
      log.info("{} from {} failed ({}): {}", why.what(), ip, why.tag(), detail);
    }
  }

  /** 0 for no limit. */
  public int maxConnections() {
    return maxConnections;
  }

  /** Servers attached so far; read by the attaching one after its attach. */
  public int instances() {
    return servers;
  }

  /** Connections currently counted. */
  public int openConnections() {
    return open.get();
  }

  /** Adds to or takes from the budget bytes held outside any connection, such as awaited event-bus answers. */
  public void heldElsewhere(long delta) {
    if (delta >= 0) {
      budget.reserve(delta);
    } else {
      budget.release(-delta);
    }
  }

  /** Whether {@code bytes} more fit in the budget. */
  public boolean roomFor(long bytes) {
    return budget.used() + bytes <= budget.limit();
  }
}
