package io.frameecho.server.impl.shared;

import io.frameecho.server.HandshakeFailure;
import io.frameecho.server.Rejection;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.Shareable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.slf4j.event.Level;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

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

  private final int maxConnections;
  private final int maxConnectionsPerIp;
  private final BufferBudget budget;
  private final AtomicInteger open = new AtomicInteger();
  private final ConcurrentHashMap<String, Integer> openPerIp = new ConcurrentHashMap<>();
  /** The deployment's rate-limited log lines: rejections and give-ways here, the connections' closes. */
  private final LogSummary logSummary;
  private final ConnectionLogs connectionLogs;
  private final Map<Rejection, LogSummary.Cause> rejections = new EnumMap<>(Rejection.class);
  private final LogSummary.Cause gaveWay;
  private final Map<HandshakeFailure, LogSummary.Cause> handshakesFailed = new EnumMap<>(HandshakeFailure.class);
  /** Servers using these limits; guarded by the shared map's compute. */
  private int servers;
  /** How the deployment's connections ended at shutdown, added up by its instances (see {@link #detach(Vertx, int[])}). */
  private final long[] endings = new long[5];
  /**
   * Where a process's deployments listen when asked for port 0: two negative ports each (the frame port, the handover's
   * entry), each one random port Vert.x shares among the servers given it. Far below -1, which applications use.
   */
  private static final AtomicInteger RANDOM_PORTS = new AtomicInteger(-(1 << 24));
  /** This deployment's own random ports, as Vert.x names a random port shared by several servers; 0 without one. */
  private final int sharedRandomPort;
  private final int sharedEntryPort;

  /** The deployment whose instances share these limits, or null for a server of its own. */
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
    connectionLogs = new ConnectionLogs(logSummary);
    for (Rejection why : Rejection.values()) {
      rejections.put(why, logSummary.cause(log, Level.WARN, "rejected {} more connection(s) in the last {} ms, the latest from {}: over "
        + why.key() + " (" + (why == Rejection.MAX_CONNECTIONS ? maxConnections : maxConnectionsPerIp) + ")"));
    }
    gaveWay = logSummary.cause(log, Level.INFO, "closed {} more idle connection(s) for newcomers in the last {} ms, the latest "
      + "for {}: every slot of maxConnections (" + maxConnections + ") was taken");
    for (HandshakeFailure why : HandshakeFailure.values()) {
      handshakesFailed.put(why, logSummary.cause(log, Level.INFO, "{} more " + why.what() + "(s) failed (" + why.tag()
        + ") in the last {} ms, the latest from {}"));
    }
  }

  private static ConnectionLimits create(Vertx vertx, String deployment, int maxConnections, int maxConnectionsPerIp,
                                         long maxBufferedBytes, int maxFrameSize, long budgetGraceMs) {
    Ticker ticker = Ticker.of(vertx);
    return new ConnectionLimits(deployment, maxConnections, maxConnectionsPerIp,
      new BufferBudget(maxBufferedBytes, budgetGraceMs, ticker), ticker);
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
      return create(vertx, null, maxConnections, maxConnectionsPerIp, maxBufferedBytes, maxFrameSize, budgetGraceMs);
    }
    return vertx.sharedData().<String, ConnectionLimits>getLocalMap(SHARED_MAP).compute(deployment, (k, limits) -> {
      ConnectionLimits attached = limits != null ? limits
        : create(vertx, deployment, maxConnections, maxConnectionsPerIp, maxBufferedBytes, maxFrameSize, budgetGraceMs);
      attached.servers++;
      return attached;
    });
  }

  /**
   * A server using these limits has closed; the last one of its deployment removes them. Pending summary lines
   * are written now: their timers may belong to the closing server's context.
   */
  public void detach(Vertx vertx) {
    detach(vertx, null);
  }

  /**
   * As {@link #detach(Vertx)}, for a server that shut down with its connections ending as {@code counts} say (in {@code
   * Drain}'s order): returns the totals of every server of the deployment when this was the last one attached, else
   * null. The deployment's shutdown is said in one line, with every instance's connections. Every change to the count
   * of servers is made in the shared map's compute, so the last one is decided once.
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

  /**
   * The port a server asked to listen on port 0 listens on: for a deployment's instances, one random port they share
   * (Vert.x shares a random port among the servers given the same negative port); 0 for a server of its own.
   */
  public int randomPort() {
    return sharedRandomPort;
  }

  /** As {@link #randomPort()}, for the handover's entry: one loopback port all instances' entries share. */
  public int entryPort() {
    return sharedEntryPort;
  }

  public BufferBudget budget() {
    return budget;
  }

  /** Where the deployment's connections rate-limit their close lines. */
  public ConnectionLogs connectionLogs() {
    return connectionLogs;
  }

  /** The rate-limited lines about {@code why}'s rejections (tests read its counts). */
  public LogSummary.Cause rejectionLog(Rejection why) {
    return rejections.get(why);
  }

  /** The rate-limited lines about idle connections closed for newcomers. */
  public LogSummary.Cause gaveWayLog() {
    return gaveWay;
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

  /** {@code ip} null: a client whose address is not known yet (its PROXY protocol header is not read), counted later. */
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

  public void release(String ip) {
    release(ip, false);
  }

  /** A connection closed: its slot is released, unless it {@code gaveWay} (the slot went to the newcomer); its address's count always. */
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

  /**
   * Counts a rejection: the first ones are logged at once, then one summary line a second at most, with how many
   * were turned away since.
   */
  public Rejection reject(Rejection why, String ip) {
    if (rejections.get(why).logNow(ip)) {
      log.warn("rejected a connection from {}: over {} ({})", ip == null ? "a proxied client (before its header)" : ip, why.key(),
        why == Rejection.MAX_CONNECTIONS ? maxConnections : maxConnectionsPerIp);
    }
    return why;
  }

  /** Counts an idle connection closed for a newcomer from {@code ip}: logged at once, then summarised. */
  public void gaveWay(String ip) {
    if (gaveWay.logNow(ip)) {
      log.info("closed an idle connection for a newcomer from {}: every slot of maxConnections ({}) was taken", ip,
        maxConnections);
    }
  }

  /**
   * Counts a TLS handshake from {@code ip} that did not complete: the first ones are logged at once with
   * {@code detail} (what happened), then one summary line a second at most per cause.
   */
  public void handshakeFailed(HandshakeFailure why, String ip, String detail) {
    if (handshakesFailed.get(why).logNow(ip)) {
      log.info("{} from {} failed ({}): {}", why.what(), ip, why.tag(), detail);
    }
  }

  /** The configured {@code maxConnections}; 0 for no limit. */
  public int maxConnections() {
    return maxConnections;
  }

  /** Servers of the deployment attached so far (its instances): read by the one attaching, after its attach. */
  public int instances() {
    return servers;
  }

  public int openConnections() {
    return open.get();
  }

  /** Bytes held outside any connection (by the event bus, for an answer still awaited) join the budget, or leave it. */
  public void heldElsewhere(long delta) {
    if (delta >= 0) {
      budget.reserve(delta);
    } else {
      budget.release(-delta);
    }
  }

  /** Whether {@code bytes} more would stay within the budget's limit. */
  public boolean roomFor(long bytes) {
    return budget.used() + bytes <= budget.limit();
  }
}
