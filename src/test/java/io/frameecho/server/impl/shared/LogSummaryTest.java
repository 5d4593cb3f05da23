package io.frameecho.server.impl.shared;

import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.VirtualTicker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The rate limit on close lines, in virtual time; counts through the summariser's own API, not log wording. */
class LogSummaryTest {

  private static final String LOGGER = "io.frameecho.test.LogSummary";

  /** Keeps the lines this test causes out of the build's output. */
  @RegisterExtension
  final LogCapture log = LogCapture.of(LOGGER);

  private final VirtualTicker ticker = new VirtualTicker();
  private final LogSummary summary = new LogSummary(ticker);
  private final LogSummary.Cause cause = summary.cause("one", LoggerFactory.getLogger(LOGGER), Level.WARN,
    "{} more in the last {} ms, the latest from {}");

  /** {@code n} occurrences; how many the caller was told to write in full. */
  private int occur(int n) {
    int now = 0;
    for (int i = 0; i < n; i++) {
      if (cause.logNow("10.0.0." + i)) {
        now++;
      }
    }
    return now;
  }

  @Test
  void aFloodWritesTheFirstLinesThenOneSummaryPerInterval() {
    assertEquals(LogSummary.AT_ONCE, occur(20_000), "the first lines at once, then only counted");
    assertEquals(LogSummary.AT_ONCE, cause.lines());

    ticker.advance(LogSummary.INTERVAL_MS - 1);
    assertEquals(LogSummary.AT_ONCE, cause.lines(), "nothing before the interval ends");
    ticker.advance(1);
    assertEquals(LogSummary.AT_ONCE + 1, cause.lines(), "the summary on time, with no further occurrence");

    assertEquals(0, occur(5_000), "within a flood, everything is summarised");
    ticker.advance(LogSummary.INTERVAL_MS);
    assertEquals(LogSummary.AT_ONCE + 2, cause.lines());
    assertEquals(25_000, cause.occurrences());

    ticker.advance(LogSummary.INTERVAL_MS);
    assertEquals(LogSummary.AT_ONCE + 2, cause.lines(), "a quiet interval writes nothing");
    assertEquals(0, ticker.pending(), "and stops the timer");
    assertEquals(1, occur(1), "after a quiet interval, the next one is written at once");
  }

  @Test
  void aFewOccurrencesAreAllWrittenInFull() {
    assertEquals(LogSummary.AT_ONCE, occur(LogSummary.AT_ONCE));
    ticker.advance(10 * LogSummary.INTERVAL_MS);
    assertEquals(LogSummary.AT_ONCE, cause.lines(), "no summary when nothing was held back");
    assertEquals(0, ticker.pending());
  }

  @Test
  void flushWritesWhatIsPendingAndStopsTheTimer() {
    occur(LogSummary.AT_ONCE + 10);
    summary.flush();
    assertEquals(LogSummary.AT_ONCE + 1, cause.lines());
    assertEquals(0, ticker.pending());
    assertTrue(cause.logNow("10.0.0.1"), "after a flush, a new burst starts");
  }

  @Test
  void causesAreLimitedApart() {
    LogSummary.Cause other = summary.cause("other", LoggerFactory.getLogger(LOGGER), Level.INFO, "{} {} {}");
    occur(100);
    assertTrue(other.logNow("10.0.0.1"), "another cause's flood does not silence this one");
    assertFalse(cause.logNow("10.0.0.1"));
  }

  /** Every connection asks for its close cause by key: one key is one limit, the first summary line kept. */
  @Test
  void oneKeyIsOneCauseForEveryCaller() {
    assertSame(cause, summary.cause("one", LoggerFactory.getLogger(LOGGER), Level.INFO, "another line"));
    occur(LogSummary.AT_ONCE);
    assertFalse(summary.cause("one", LoggerFactory.getLogger(LOGGER), Level.WARN, "").logNow("10.0.0.9"),
      "the limit is the key's, not the caller's");
  }
}
