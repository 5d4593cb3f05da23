package io.frameecho.bench;

/**
 * When each request of one connection is meant to be sent in open-loop mode: request {@code k} at
 * {@code start + k * interval}. Latency is measured from that intended time, not from when the request
 * actually went out, so a server that makes requests queue is charged for the wait (the coordinated
 * omission correction of wrk2).
 */
public final class RateSchedule {

  private final long startNanos;
  private final long intervalNanos;

  /**
   * @param startNanos when request 0 is due ({@link System#nanoTime()} clock)
   * @param requestsPerSecond this connection's share of the total rate
   */
  public RateSchedule(long startNanos, double requestsPerSecond) {
    if (!(requestsPerSecond > 0)) {
      throw new IllegalArgumentException("rate must be positive: " + requestsPerSecond);
    }
    this.startNanos = startNanos;
    this.intervalNanos = Math.max(1L, Math.round(1e9 / requestsPerSecond));
  }

  /** The intended send time of request {@code k}. */
  public long intendedNanos(long k) {
    return startNanos + k * intervalNanos;
  }

  public long intervalNanos() {
    return intervalNanos;
  }
}
