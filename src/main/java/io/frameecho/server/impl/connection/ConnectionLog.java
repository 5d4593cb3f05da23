package io.frameecho.server.impl.connection;

import io.frameecho.protocol.FrameTooLargeException;
import io.frameecho.protocol.FramingException;
import io.frameecho.server.CloseReason;
import io.frameecho.server.impl.connection.ReadPause.Reason;
import io.frameecho.server.impl.shared.BudgetAccount;
import io.frameecho.server.impl.shared.LogSummary;
import io.netty.buffer.ByteBuf;
import io.vertx.core.net.SocketAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

import java.nio.charset.StandardCharsets;

/**
 * What one connection writes to the log: close causes at INFO and WARN, the first few in full and then summarised per
 * cause for the whole deployment by its {@link LogSummary}, so a flood of bad clients cannot flood the log; the
 * connection's life at DEBUG and TRACE; and on {@value #LOOP_LOGGER} the loop's decisions (want_read, want_write,
 * want_close). Each line checks its level first, so nothing is formatted or allocated for a level that is off. On the
 * connection's event loop.
 */
final class ConnectionLog {

  /** The connections' logger name, kept because operators configure it. */
  static final String LOGGER = "io.frameecho.server.impl.Connection";
  private static final Logger log = LoggerFactory.getLogger(LOGGER);
  private static final int LOGGED_PAYLOAD_BYTES = 100;
  /** The loop's decisions, per connection. */
  static final String LOOP_LOGGER = "io.frameecho.loop";
  private static final Logger loop = LoggerFactory.getLogger(LOOP_LOGGER);
  private static final String EVICTED_SUMMARY = "{} more connection(s) evicted in the last {} ms for the buffer budget "
    + "(budgetGraceMs), the latest from {}";

  private final SocketAddress remote;
  private final LogSummary summary;
  private final int messageOffset;

  ConnectionLog(SocketAddress remote, LogSummary summary, int messageOffset) {
    this.remote = remote;
    this.summary = summary;
    this.messageOffset = messageOffset;
  }

  /** Counts one {@code why} for the deployment; true when this one is written in full, else it joins the summary. */
  private boolean logNow(CloseReason why, Level level, String summaryLine, Object sample) {
    return summary.cause(why, log, level, summaryLine).logNow(sample);
  }

  void newClient() {
    if (log.isDebugEnabled()) {
      log.debug("new client from {}", remote);
    }
  }

  /** The length and first bytes of a request. */
  private void clientSays(ByteBuf frame) {
    if (log.isTraceEnabled()) {
      int length = frame.readableBytes() - messageOffset;
      byte[] start = new byte[Math.min(length, LOGGED_PAYLOAD_BYTES)];
      frame.getBytes(frame.readerIndex() + messageOffset, start);
      log.trace("{} client says: len:{} data:{}", remote, length, new String(start, StandardCharsets.ISO_8859_1));
    }
  }

  /** Reading paused for {@code reason}; {@code wasOpen} false when it was already paused for another. */
  void readingPaused(Reason reason, boolean wasOpen) {
    if (loop.isDebugEnabled()) {
      loop.debug("{} want_read=false: {}{}", remote, reason.paused, wasOpen ? "" : " (already paused for another reason)");
    }
  }

  /** {@code reason} cleared; {@code opened} when it was the last one. */
  void readingResumed(Reason reason, boolean opened) {
    if (loop.isDebugEnabled()) {
      loop.debug("{} {}: {}", remote, opened ? "want_read=true" : "want_read still false", reason.cleared);
    }
  }

  /** A request frame is complete, header included in {@code frame}. */
  void frameComplete(ByteBuf frame) {
    if (loop.isTraceEnabled()) {
      loop.trace("{} frame complete: len:{}", remote, frame.readableBytes() - messageOffset);
    }
    clientSays(frame);
  }

  /** Whether the write lines are on: asked once per write, so bytes are counted only then. */
  boolean tracingWrites() {
    return loop.isTraceEnabled();
  }

  /** Answers joined the write queue; the caller checks {@link #tracingWrites()} first. */
  void answersQueued(int bytes, boolean queueFull) {
    loop.trace("{} want_write: {} bytes of answers queued{}", remote, bytes, queueFull ? ", the queue is over writeQueueMaxSize" : "");
  }

  /** Answers the socket has written, or could not. */
  void answersWritten(int bytes, boolean succeeded) {
    if (loop.isTraceEnabled()) {
      loop.trace("{} {} bytes of answers {}", remote, bytes, succeeded ? "written" : "not written: the socket failed");
    }
  }

  /** The close is decided for {@code reason}: after the answers owed, or at once. */
  void wantClose(CloseReason reason, boolean afterAnswers) {
    if (loop.isDebugEnabled()) {
      loop.debug("{} want_close: {}, {}", remote, reason, afterAnswers ? "after the answers owed" : "at once, dropping what is queued");
    }
  }

  void protocolError(FramingException error) {
    if (logNow(CloseReason.PROTOCOL_ERROR, Level.WARN, "{} more protocol error(s) in the last {} ms (a frame length "
      + "over maxFrameSize), the latest from {}; each connection closed after its earlier responses", remote)) {
      if (error instanceof FrameTooLargeException e) {
        log.warn("{} protocol error: frame length {} exceeds maxFrameSize {}; closing after the earlier responses",
          remote, e.length(), e.maxFrameSize());
      } else {
        log.warn("{} protocol error: {}; closing after the earlier responses", remote, error.getMessage());
      }
    }
  }

  void handlerFailed(Throwable cause) {
    if (logNow(CloseReason.HANDLER_FAILED, Level.WARN, "{} more connection(s) closed in the last {} ms because the "
      + "request handler failed, the latest {}", new FailedFrom(remote, cause))) {
      log.warn("{} closing: request handler failed: {}", remote, cause.toString());
    }
  }

  void budgetEvicted(long heldBytes, long stalledMs, int waiting, long used, long limit) {
    if (logNow(CloseReason.BUDGET_EVICTED, Level.INFO, EVICTED_SUMMARY, remote)) {
      log.info("{} closing: evicted for the buffer budget: its admitted frame holds {} bytes and read less than {} bytes in {} ms "
          + "while {} connection(s) waited (budgetGraceMs); {} of {} bytes held (maxBufferedBytes)",
        remote, heldBytes, BudgetAccount.MIN_PROGRESS, stalledMs, waiting, used, limit);
    }
  }

  void nonReaderEvicted(long stalledMs, int waiting, long used, long limit) {
    if (logNow(CloseReason.BUDGET_EVICTED, Level.INFO, EVICTED_SUMMARY, remote)) {
      log.info("{} closing: evicted for the buffer budget: its client was sent no byte for {} ms while its responses were "
          + "held and {} connection(s) waited (a quarter of writeStallTimeoutMs); {} of {} bytes held (maxBufferedBytes)",
        remote, stalledMs, waiting, used, limit);
    }
  }

  void idle(long idleMs) {
    if (log.isDebugEnabled()) {
      log.debug("{} closing: no request for {} ms (idleTimeoutMs)", remote, idleMs);
    }
  }

  void frameTimedOut(long elapsedMs, long bufferedBytes) {
    if (logNow(CloseReason.FRAME_TIMEOUT, Level.INFO, "{} more connection(s) closed in the last {} ms for a frame "
      + "still incomplete after frameTimeoutMs, the latest from {}", remote)) {
      log.info("{} closing: a frame started {} ms ago (not counting time the server paused reading) is still incomplete "
          + "after {} bytes (frameTimeoutMs)", remote, elapsedMs, bufferedBytes);
    }
  }

  void writeStalled(long writeStallTimeoutMs) {
    if (logNow(CloseReason.WRITE_STALL, Level.INFO, "{} more connection(s) closed in the last {} ms for reading no "
      + "response byte for writeStallTimeoutMs, the latest from {}", remote)) {
      log.info("{} closing: no response byte read for {} ms (writeStallTimeoutMs)", remote, writeStallTimeoutMs);
    }
  }

  /** The connection's last lines, the loop's and its own: every count is final. */
  void closed(CloseReason reason, Throwable ioError) {
    if (loop.isDebugEnabled()) {
      loop.debug("{} closed: {}", remote, reason);
    }
    if (log.isDebugEnabled()) {
      if (ioError == null) {
        log.debug("{} {}", remote, reason);
      } else {
        log.debug("{} {}: {}", remote, reason, ioError.getMessage());
      }
    }
  }

  /** A failed handler's sample for its summary line, formatted only if that line is written. */
  private record FailedFrom(SocketAddress remote, Throwable cause) {
    @Override
    public String toString() {
      return "from " + remote + ": " + cause;
    }
  }
}
