package io.frameecho.server.impl.shared;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * The rate-limited causes a connection logs when it closes; it writes a full line only when
 * {@link LogSummary.Cause#logNow} allows.
 */
public final class ConnectionLogs {

  /** The connections' logger name, kept because operators configure it. */
  public static final String LOGGER = "io.frameecho.server.impl.Connection";

  public final LogSummary.Cause protocolError;
  public final LogSummary.Cause handlerFailed;
  public final LogSummary.Cause frameTimeout;
  public final LogSummary.Cause writeStall;
  public final LogSummary.Cause budgetEvicted;

  /** Registers each cause with the deployment's {@code summary}. */
  public ConnectionLogs(LogSummary summary) {
    Logger log = LoggerFactory.getLogger(LOGGER);
    protocolError = summary.cause(log, Level.WARN, "{} more protocol error(s) in the last {} ms (a frame length over "
      + "maxFrameSize), the latest from {}; each connection closed after its earlier responses");
    handlerFailed = summary.cause(log, Level.WARN, "{} more connection(s) closed in the last {} ms because the request "
      + "handler failed, the latest {}");
    frameTimeout = summary.cause(log, Level.INFO, "{} more connection(s) closed in the last {} ms for a frame still "
      + "incomplete after frameTimeoutMs, the latest from {}");
    writeStall = summary.cause(log, Level.INFO, "{} more connection(s) closed in the last {} ms for reading no response "
      + "byte for writeStallTimeoutMs, the latest from {}");
    budgetEvicted = summary.cause(log, Level.INFO, "{} more connection(s) evicted in the last {} ms for the buffer "
      + "budget (budgetGraceMs), the latest from {}");
  }
}
