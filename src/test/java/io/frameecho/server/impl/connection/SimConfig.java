package io.frameecho.server.impl.connection;

import io.frameecho.protocol.LengthField;
import io.frameecho.server.FrameEchoOptions;

import java.nio.ByteOrder;
import java.util.Random;

/**
 * One simulation run's settings, all drawn from its seed (so a seed names its configuration): small sizes and
 * short clocks, so that a run covers evictions, timeouts and lingering closes in a few thousand steps.
 * {@code connections} (client slots open at once) and {@code steps} may be given instead, to shrink or replay a run.
 */
record SimConfig(long seed, int connections, int steps, int loops, int maxFrameSize, long maxBufferedBytes,
                 long budgetGraceMs, long frameTimeoutMs, long writeStallTimeoutMs, int writeQueueMaxSize,
                 long lingerTimeoutMs, int kernelBufferBytes, boolean tls, boolean application, int maxInFlight,
                 int maxTickMs, boolean tcpInfo, int shutdownAtPercent, boolean handover, LengthField framing) {

  /**
   * Header forms besides frame-echo's own, each able to announce the largest frame: a length that counts its header,
   * one after bytes of the application's, a long one.
   */
  static final LengthField[] FORMS = {
    LengthField.of(3, ByteOrder.BIG_ENDIAN).withLengthAdjustment(-3),
    LengthField.of(3, ByteOrder.LITTLE_ENDIAN).withLengthFieldOffset(2),
    LengthField.of(8, ByteOrder.BIG_ENDIAN),
    LengthField.of(4, ByteOrder.BIG_ENDIAN).withLengthFieldOffset(1).withLengthAdjustment(-5)};
  /** Forms whose header the handler gets and answers with: for the echo only (the application reverses what it gets). */
  static final LengthField[] KEPT_HEADER_FORMS = {
    LengthField.of(3, ByteOrder.BIG_ENDIAN).withLengthFieldOffset(1).withStripHeader(false),
    LengthField.DEFAULT.withLengthAdjustment(-4).withStripHeader(false)};

  /** At most how long the application handler takes to answer (a ticker delay). */
  static final int APPLICATION_DELAY_MS = 50;
  /** After shutdown began, how long until what is still open is cut: the server's {@code shutdownTimeoutMs}. */
  static final long SHUTDOWN_TIMEOUT_MS = 10_000;
  /** TLS delivers whole records of at most this many bytes. */
  static final int TLS_RECORD = 16 * 1024;

  static SimConfig of(long seed, Integer connections, Integer steps) {
    // Mixed, so that neighbouring seeds draw unrelated configurations (Random's first draws follow a small seed closely).
    Random r = new Random(seed * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L);
    int loops = 1 + r.nextInt(4);
    int maxFrameSize = (16 + r.nextInt(49)) * 1024;
    long limit = (64 + r.nextInt(449)) * 1024L;
    long grace = 200 + r.nextInt(9) * 100;
    long frameTimeout = 2000 + r.nextInt(14) * 1000;
    long writeStall = 3000 + r.nextInt(28) * 1000;
    int writeQueue = (4 + r.nextInt(61)) * 1024;
    long linger = 500 + r.nextInt(10) * 500;
    int kernel = (64 + r.nextInt(193)) * 1024;
    boolean tls = r.nextInt(4) == 0;
    boolean application = r.nextInt(3) == 0;
    int maxInFlight = 1 + r.nextInt(16);
    int maxTickMs = 10 + r.nextInt(91);
    int drawnConnections = 4 + r.nextInt(37);
    int c = connections != null ? connections : drawnConnections;
    int s = steps != null ? steps : 600 + 30 * c;
    // Whether the socket tells when the kernel last sent the client data (epoll's TCP_INFO), as on Linux by default.
    boolean tcpInfo = r.nextInt(4) != 0;
    // A quarter of the runs with frames (and a budget) four times as large: frames that take more than a grace to send.
    if (r.nextInt(4) == 0) {
      maxFrameSize *= 4;
      limit *= 4;
    }
    // Half the runs shut down (as a server stops) at a point of the run; drawn last, so the other draws stay as they were.
    int shutdownAtPercent = r.nextBoolean() ? 20 + r.nextInt(71) : -1;
    // Half the runs that shut down have a successor to hand connections over to (a restart with handoverSocket).
    boolean handover = shutdownAtPercent >= 0 && r.nextBoolean();
    // A quarter of the runs in another header form; drawn last, so that the other draws stay as they were.
    LengthField framing = LengthField.DEFAULT;
    if (r.nextInt(4) == 0) {
      int pick = r.nextInt(FORMS.length + KEPT_HEADER_FORMS.length);
      framing = pick < FORMS.length ? FORMS[pick] : application ? FORMS[pick % FORMS.length] : KEPT_HEADER_FORMS[pick - FORMS.length];
    }
    return new SimConfig(seed, c, s, loops, maxFrameSize, limit, grace, frameTimeout, writeStall, writeQueue, linger,
      kernel, tls, application, maxInFlight, maxTickMs, tcpInfo, shutdownAtPercent, handover, framing);
  }

  FrameEchoOptions options() {
    FrameEchoOptions options = new FrameEchoOptions().setMaxFrameSize(maxFrameSize).setMaxBufferedBytes(maxBufferedBytes)
      .setBudgetGraceMs(budgetGraceMs).setFrameTimeoutMs(frameTimeoutMs).setWriteStallTimeoutMs(writeStallTimeoutMs)
      .setWriteQueueMaxSize(writeQueueMaxSize).setLingerTimeoutMs(lingerTimeoutMs)
      // Longer than any quiet spell of a client that keeps sending: an idle close is not what these runs look at.
      .setIdleTimeoutMs(4 * frameTimeoutMs)
      .setFraming(framing);
    options.getHandler().setMaxInFlight(maxInFlight);
    return options;
  }

  /** The one command that replays this run. */
  String replayCommand() {
    return "mvn -B -o test -Dtest=ConnectionSimulationTest -Dsurefire.failIfNoSpecifiedTests=false -Dfuzz.skip -Dinvoker.skip"
      + " -Dsimulation.seed=" + seed + " -Dsimulation.connections=" + connections + " -Dsimulation.steps=" + steps;
  }

  @Override
  public String toString() {
    return "seed=" + seed + " connections=" + connections + " steps=" + steps + " loops=" + loops
      + " maxFrameSize=" + maxFrameSize + " maxBufferedBytes=" + maxBufferedBytes + " budgetGraceMs=" + budgetGraceMs
      + " frameTimeoutMs=" + frameTimeoutMs + " writeStallTimeoutMs=" + writeStallTimeoutMs
      + " writeQueueMaxSize=" + writeQueueMaxSize + " lingerTimeoutMs=" + lingerTimeoutMs
      + " kernelBufferBytes=" + kernelBufferBytes + " tls=" + tls + " handler=" + (application ? "application" : "echo")
      + " maxInFlight=" + maxInFlight + " maxTickMs=" + maxTickMs + " tcpInfo=" + tcpInfo
      + " shutdownAtPercent=" + shutdownAtPercent + " handover=" + handover
      + (framing.isDefault() ? "" : " framing=" + framing);
  }
}
