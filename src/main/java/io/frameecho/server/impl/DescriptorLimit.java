package io.frameecho.server.impl;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Whether the process may open enough file descriptors for {@code maxConnections}: one per connection (TLS
 * handshakes included), plus the JVM's own (its jars, the event loops' epoll and wake-up descriptors, the listening
 * sockets, the metrics port): {@link #RESERVED} in all, several times what the jar opens when idle (about 30).
 * Connections turned away or giving way hold a descriptor for up to a second more, so leave room above this under
 * floods of newcomers.
 */
final class DescriptorLimit {

  /** Descriptors the process needs besides its connections. */
  static final int RESERVED = 128;
  /** The largest need already warned about: each process warns once per larger need. */
  private static final AtomicLong WARNED_FOR = new AtomicLong();

  private DescriptorLimit() {
  }

  /** Descriptors {@code maxConnections} needs; 0 when it has no limit (nothing to compare). */
  static long needed(int maxConnections) {
    return maxConnections == 0 ? 0 : (long) maxConnections + RESERVED;
  }

  /** The process's limit on open descriptors ({@code ulimit -n}), or -1 when the JVM does not say. */
  static long processLimit() {
    OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    return os instanceof com.sun.management.UnixOperatingSystemMXBean unix ? unix.getMaxFileDescriptorCount() : -1;
  }

  /** The line to warn with when {@code limit} is below what {@code maxConnections} needs (once per need), else null. */
  static String shortfall(int maxConnections, long limit) {
    long needed = needed(maxConnections);
    if (limit < 0 || needed <= limit) {
      return null;
    }
    long warned = WARNED_FOR.get();
    if (needed <= warned || !WARNED_FOR.compareAndSet(warned, needed)) {
      return null;
    }
    return "the process may open " + limit + " file descriptors (ulimit -n, LimitNOFILE), fewer than maxConnections ("
      + maxConnections + ") needs with the JVM's own (" + needed + "): connections past it cannot be accepted "
      + "(Too many open files). Raise the limit, or lower maxConnections";
  }
}
