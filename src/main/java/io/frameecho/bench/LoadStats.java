package io.frameecho.bench;

import org.HdrHistogram.Recorder;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/** Counters and the latency recorder shared by every connection of a run; all safe across event loops. */
final class LoadStats {

  /** Latencies above this are recorded as this (a request outstanding for an hour has other problems). */
  static final long HIGHEST_LATENCY_NANOS = TimeUnit.HOURS.toNanos(1);

  final Recorder latencyNanos = new Recorder(1, HIGHEST_LATENCY_NANOS, 3);
  final LongAdder completed = new LongAdder();
  final LongAdder bytesSent = new LongAdder();
  final LongAdder bytesReceived = new LongAdder();
  final LongAdder errors = new LongAdder();
  /** Connections the server ended cleanly: a FIN after whole responses (a restart, a shutdown, a timeout). */
  final LongAdder serverCloses = new LongAdder();
  /** Requests in flight on those connections, never answered. */
  final LongAdder unanswered = new LongAdder();
  final LongAdder mismatches = new LongAdder();
  final LongAdder connectionFailures = new LongAdder();

  private final java.util.concurrent.atomic.AtomicReference<String> firstError = new java.util.concurrent.atomic.AtomicReference<>();

  void noteError(String description) {
    firstError.compareAndSet(null, description);
  }

  /** The first error seen, described, or null. */
  String firstError() {
    return firstError.get();
  }

  void recordLatency(long nanos) {
    latencyNanos.recordValue(Math.max(1, Math.min(nanos, HIGHEST_LATENCY_NANOS)));
  }
}
