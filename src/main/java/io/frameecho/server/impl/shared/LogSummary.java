package io.frameecho.server.impl.shared;

import org.slf4j.Logger;
import org.slf4j.event.Level;

import java.util.ArrayList;
import java.util.List;

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
  private final long intervalMs;
  private final List<Cause> causes = new ArrayList<>();

  /** A summary with the default interval. */
  public LogSummary(Ticker ticker) {
    this(ticker, INTERVAL_MS);
  }

  LogSummary(Ticker ticker, long intervalMs) {
    this.ticker = ticker;
    this.intervalMs = intervalMs;
  }

  /** Adds a cause whose {@code summary} has placeholders for the count, the milliseconds covered and the sample. */
  public synchronized Cause cause(Logger log, Level level, String summary) {
    Cause cause = new Cause(log, level, summary);
    causes.add(cause);
    return cause;
  }

  /** Writes pending summaries now and stops the timers, whose context may be closing. */
  public void flush() {
    List<Cause> all;
    synchronized (this) {
      all = List.copyOf(causes);
    }
    all.forEach(Cause::flush);
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
          timer = ticker.schedule(intervalMs, this::intervalEnded);
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

    /** Writes the interval's summary and starts another, or goes quiet if nothing was counted. */
    private void intervalEnded() {
      Line line;
      synchronized (this) {
        line = takeLine();
        timer = line == null ? -1 : ticker.schedule(intervalMs, this::intervalEnded);
      }
      write(line);
    }

    private void flush() {
      Line line;
      synchronized (this) {
        if (timer != -1) {
          ticker.cancel(timer);
          timer = -1;
        }
        line = takeLine();
      }
      write(line);
    }

    /** Takes the pending summary, or null; under the lock. */
    private Line takeLine() {
      if (pending == 0) {
        return null;
      }
      long now = ticker.nanoTime();
      Line line = new Line(pending, (now - windowStartNanos) / 1_000_000, latest);
      pending = 0;
      latest = null;
      windowStartNanos = now;
      lines++;
      return line;
    }

    private void write(Line line) {
      if (line != null) {
        log.atLevel(level).log(summary, line.count, line.windowMs, line.latest);
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

  private record Line(long count, long windowMs, Object latest) {
  }
}
