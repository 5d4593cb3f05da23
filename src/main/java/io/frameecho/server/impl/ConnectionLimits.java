package io.frameecho.server.impl;

import io.vertx.core.shareddata.Shareable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What one server process shares between its verticle instances: the connection counts behind
 * {@code maxConnections} and {@code maxConnectionsPerIp}, and the {@link BufferBudget}. Kept in the
 * Vert.x instance's local shared data, so every instance deployed in it finds the same one.
 */
public final class ConnectionLimits implements Shareable {

  private static final Logger log = LoggerFactory.getLogger(ConnectionLimits.class);
  private static final String SHARED_KEY = "frame-echo.limits";
  private static final long LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** Why a connection was turned away. */
  public enum Rejection {
    MAX_CONNECTIONS("maxConnections"),
    MAX_CONNECTIONS_PER_IP("maxConnectionsPerIp");

    private final String key;

    Rejection(String key) {
      this.key = key;
    }

    /** The configuration key of the limit. */
    public String key() {
      return key;
    }
  }

  private final int maxConnections;
  private final int maxConnectionsPerIp;
  private final BufferBudget budget;
  private final AtomicInteger open = new AtomicInteger();
  private final ConcurrentHashMap<String, Integer> openPerIp = new ConcurrentHashMap<>();
  private final AtomicLong rejectedSinceLog = new AtomicLong();
  private final AtomicLong lastLogNanos = new AtomicLong(System.nanoTime() - LOG_INTERVAL_NANOS);

  public ConnectionLimits(int maxConnections, int maxConnectionsPerIp, long maxBufferedBytes) {
    this.maxConnections = maxConnections;
    this.maxConnectionsPerIp = maxConnectionsPerIp;
    this.budget = new BufferBudget(maxBufferedBytes);
  }

  /** The limits of this Vert.x instance's servers, created by the first server with its settings. */
  public static ConnectionLimits shared(io.vertx.core.Vertx vertx, int maxConnections, int maxConnectionsPerIp, long maxBufferedBytes) {
    return (ConnectionLimits) vertx.sharedData().getLocalMap(SHARED_KEY)
      .computeIfAbsent(SHARED_KEY, k -> new ConnectionLimits(maxConnections, maxConnectionsPerIp, maxBufferedBytes));
  }

  /** The limits of this Vert.x instance's servers, or null before any server was created. */
  public static ConnectionLimits find(io.vertx.core.Vertx vertx) {
    return (ConnectionLimits) vertx.sharedData().getLocalMap(SHARED_KEY).get(SHARED_KEY);
  }

  public BufferBudget budget() {
    return budget;
  }

  /**
   * Counts a new connection from {@code ip}, or returns why it must be turned away (and counts nothing).
   * Every {@code null} answer must be matched by one {@link #release}.
   */
  public Rejection tryAcquire(String ip) {
    if (maxConnections > 0 && open.incrementAndGet() > maxConnections) {
      open.decrementAndGet();
      return rejected(Rejection.MAX_CONNECTIONS, ip);
    } else if (maxConnections == 0) {
      open.incrementAndGet();
    }
    if (maxConnectionsPerIp > 0) {
      boolean[] over = {false};
      openPerIp.compute(ip, (k, n) -> {
        int count = n == null ? 0 : n;
        over[0] = count >= maxConnectionsPerIp;
        return over[0] ? n : Integer.valueOf(count + 1);
      });
      if (over[0]) {
        open.decrementAndGet();
        return rejected(Rejection.MAX_CONNECTIONS_PER_IP, ip);
      }
    }
    return null;
  }

  public void release(String ip) {
    open.decrementAndGet();
    if (maxConnectionsPerIp > 0) {
      openPerIp.computeIfPresent(ip, (k, n) -> n == 1 ? null : n - 1);
    }
  }

  /** Counts a rejection and logs one line a second at most, with how many were turned away since. */
  private Rejection rejected(Rejection why, String ip) {
    rejectedSinceLog.incrementAndGet();
    long now = System.nanoTime();
    long last = lastLogNanos.get();
    if (now - last >= LOG_INTERVAL_NANOS && lastLogNanos.compareAndSet(last, now)) {
      long count = rejectedSinceLog.getAndSet(0);
      log.warn("rejected {} connection(s) in the last {} ms, the latest from {}: over {} ({})",
        count, TimeUnit.NANOSECONDS.toMillis(now - last), ip, why.key,
        why == Rejection.MAX_CONNECTIONS ? maxConnections : maxConnectionsPerIp);
    }
    return why;
  }

  public int openConnections() {
    return open.get();
  }
}
