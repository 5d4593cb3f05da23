package io.frameecho.server.impl.shared;

import org.slf4j.Logger;
import org.slf4j.event.Level;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Rate-limited log lines, so a flood cannot multiply them: per cause, the first {@link #AT_ONCE} occurrences are
 * logged in full by the caller, then counted and summarised once per interval by a timer; a quiet interval resets
 * this. Thread-safe with one lock per cause, taken only when something is logged.
 */
public final class LogSummary {

  /** Occurrences logged in full before summarising. */
  public static final int AT_ONCE = 3;
  /** Interval between summary lines per cause. */
  public static final long INTERVAL_MS = 1000;

  private final Ticker ticker;
  private final Map<Object, Cause> causes = new ConcurrentHashMap<>();

  /** Summaries timed on {@code ticker}. */
  public LogSummary(Ticker ticker) {
    this.ticker = ticker;
  }

  /**
   * The cause kept under {@code key}, added on first use with a {@code summary} that has placeholders for the count,
   * the milliseconds covered and the sample. One key is one rate limit, however many callers (connections) ask.
   */
  public Cause cause(Object key, Logger log, Level level, String summary) {
    Cause cause = causes.get(key);
    return cause != null ? cause : causes.computeIfAbsent(key, k -> new Cause(log, level, summary));
  }

  /** Writes pending summaries now and stops the timers, whose context may be closing. */
  public void flush() {
    causes.values().forEach(cause -> cause.summarise(false));
  }

  /** One cause's occurrences. */
  public final class Cause {

    private final Logger log;
    private final Level level;
    private final String summary;
    /** Full lines since the last quiet interval. */
    private int writtenAtOnce;
    /** Counted since the last summary, and the latest sample. */
    private long pending;
    private Object latest;
    private long windowStartNanos;
    /** The running timer, or -1 when quiet. */
    private long timer = -1;
    private long occurrences;
    private long lines;

    private Cause(Logger log, Level level, String summary) {
      this.log = log;
      this.level = level;
      this.summary = summary;
    }

    /** Records an occurrence from {@code sample}; true when the caller should log it in full now. */
    public boolean logNow(Object sample) {
      synchronized (this) {
        occurrences++;
        if (timer == -1) {
          writtenAtOnce = 0;
          windowStartNanos = ticker.nanoTime();
          timer = ticker.schedule(INTERVAL_MS, () -> summarise(true));
        }
        if (writtenAtOnce < AT_ONCE) {
          writtenAtOnce++;
          lines++;
          return true;
        }
        pending++;
        latest = sample;
        return false;
      }
    }

    /**
     * Writes the summary of what was counted, if anything, outside the lock. At an interval's end a summary starts
     * the next interval and a quiet one ends the run; a flush stops the timer instead.
     */
    private void summarise(boolean intervalEnded) {
      Object[] line = null;
      synchronized (this) {
        if (!intervalEnded && timer != -1) {
          ticker.cancel(timer);
        }
        timer = -1;
        if (pending != 0) {
          long now = ticker.nanoTime();
          line = new Object[] {pending, (now - windowStartNanos) / 1_000_000, latest};
          pending = 0;
          latest = null;
          windowStartNanos = now;
          lines++;
          if (intervalEnded) {
            timer = ticker.schedule(INTERVAL_MS, () -> summarise(true));
          }
        }
      }
      if (line != null) {
        log.atLevel(level).log(summary, line);
      }
    }

    /** Occurrences so far. */
    public synchronized long occurrences() {
      return occurrences;
    }

    /** Lines written so far, full and summary. */
    public synchronized long lines() {
      return lines;
    }
  }
}
