package io.frameecho.server.impl.shared;

import org.slf4j.Logger;
import org.slf4j.event.Level;

import java.util.ArrayList;
import java.util.List;

/**
 * Per-connection log lines that a flood cannot multiply: for each cause (a protocol error, a frame timeout, a
 * rejection, ...) the first {@link #AT_ONCE} occurrences are written at once, in full, by the caller; after
 * that, occurrences are only counted, and a timer writes one line per cause per interval with the count and
 * the latest address, on time (not when the next occurrence comes). After an interval with nothing to report,
 * the next occurrence is written at once again. Called from every event loop of a deployment: each cause is
 * guarded by its own lock, taken only when something is to be logged (a close, never a read).
 */
public final class LogSummary {

  /** Occurrences of one cause written in full before the rest are summarised. */
  public static final int AT_ONCE = 3;
  /** One summary line per cause per interval at most. */
  public static final long INTERVAL_MS = 1000;

  private final Ticker ticker;
  private final long intervalMs;
  private final List<Cause> causes = new ArrayList<>();

  public LogSummary(Ticker ticker) {
    this(ticker, INTERVAL_MS);
  }

  LogSummary(Ticker ticker, long intervalMs) {
    this.ticker = ticker;
    this.intervalMs = intervalMs;
  }

  /**
   * A cause whose summary line is {@code summary} at {@code level}, with three placeholders: how many more,
   * over how many milliseconds, the latest one's address (or whatever the caller passes as its sample).
   */
  public synchronized Cause cause(Logger log, Level level, String summary) {
    Cause cause = new Cause(log, level, summary);
    causes.add(cause);
    return cause;
  }

  /** Writes every pending summary now and stops the timers: their context may be closing with the server. */
  public void flush() {
    List<Cause> all;
    synchronized (this) {
      all = List.copyOf(causes);
    }
    all.forEach(Cause::flush);
  }

  /** One cause's occurrences: written at once, or counted for its next summary line. */
  public final class Cause {

    private final Logger log;
    private final Level level;
    private final String summary;
    /** Written in full since the last quiet interval. */
    private int writtenAtOnce;
    /** Counted since the last summary line, and the latest one's sample. */
    private long pending;
    private Object latest;
    private long windowStartNanos;
    /** The running timer, or -1 when none runs (quiet). */
    private long timer = -1;
    private long occurrences;
    private long lines;

    private Cause(Logger log, Level level, String summary) {
      this.log = log;
      this.level = level;
      this.summary = summary;
    }

    /**
     * One occurrence, from {@code sample} (the client's address): true when the caller is to write its full line
     * now; false when it is counted for the summary (and the caller formats nothing).
     */
    public boolean logNow(Object sample) {
      synchronized (this) {
        occurrences++;
        if (timer == -1) {
          // The first of a burst: a window opens, and its timer closes it.
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

    /** The interval is over: its summary line if anything was counted (and a new interval), else quiet again. */
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

    /** The summary of what was counted since the last one, or null; under the lock. */
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

    /** Occurrences so far, written or counted. */
    public synchronized long occurrences() {
      return occurrences;
    }

    /** Lines written for this cause so far: in full, and summaries. */
    public synchronized long lines() {
      return lines;
    }
  }

  private record Line(long count, long windowMs, Object latest) {
  }
}
