package io.frameecho.server.impl.ops;

import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.impl.shared.ConnectionLimits;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.Shareable;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What operators see of one Vert.x instance's frame-echo servers: frame-echo's meters, and whether the
 * process is ready for traffic (at least one server listening, none draining). Shared by every server in
 * the Vert.x instance, whichever deployment it belongs to; the gauges add up every server's limits.
 * <p>
 * Micrometer is an optional dependency: nothing of it is loaded unless metrics are enabled.
 */
public final class Operations implements Shareable {

  private static final String SHARED_KEY = "frame-echo.operations";

  /** The built-in meters, or null when metrics are off. */
  private final MicrometerFrameEchoMetrics meters;
  private final Set<ConnectionLimits> servers = ConcurrentHashMap.newKeySet();
  private final AtomicInteger listening = new AtomicInteger();
  private final AtomicInteger draining = new AtomicInteger();

  private Operations(boolean metricsEnabled) {
    this.meters = metricsEnabled ? MicrometerFrameEchoMetrics.create(this) : null;
  }

  /**
   * The Vert.x instance's operations state, created by its first server. With metrics on, frame-echo's
   * meters join the application's registry when Vert.x was started with Micrometer metrics, or a Prometheus
   * registry of their own otherwise.
   *
   * @throws IllegalStateException metrics are enabled but Micrometer is not on the class path
   */
  public static Operations shared(Vertx vertx, boolean metricsEnabled) {
    return (Operations) vertx.sharedData().getLocalMap(SHARED_KEY).computeIfAbsent(SHARED_KEY, k -> new Operations(metricsEnabled));
  }

  /** Where connections report: the built-in meters, or nothing. */
  public FrameEchoMetrics metrics() {
    return meters == null ? FrameEchoMetrics.NONE : meters;
  }

  /** The Prometheus text exposition of every meter, or null when the registry is not a Prometheus one. */
  public String scrape() {
    return meters == null ? null : meters.scrape();
  }

  /** A server's limits join the gauges; balanced by {@link #remove}. */
  public void add(ConnectionLimits limits) {
    servers.add(limits);
  }

  public void remove(ConnectionLimits limits) {
    servers.remove(limits);
  }

  /** Connections open on every server. */
  public int openConnections() {
    return servers.stream().mapToInt(ConnectionLimits::openConnections).sum();
  }

  /** Bytes held against every server's buffer budget. */
  public long bufferedBytes() {
    return servers.stream().mapToLong(limits -> limits.budget().used()).sum();
  }

  /** Connections paused until the buffer budget has room, on every server. */
  public int budgetWaiting() {
    return servers.stream().mapToInt(limits -> limits.budget().waiting()).sum();
  }

  public void listening() {
    listening.incrementAndGet();
  }

  public void stoppedListening() {
    listening.decrementAndGet();
  }

  /** Readiness turns false from now on: the server is about to stop accepting. */
  public void draining() {
    draining.incrementAndGet();
  }

  public boolean ready() {
    return listening.get() > 0 && draining.get() == 0;
  }
}
