package io.frameecho.testkit;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Captures one logger's events: it keeps the WARN lines a test causes on purpose out of the build's output, and
 * lets a test count how often a logger speaks (a rate-limited line). What the server decided (a close reason, a
 * rejection, a protocol error) reaches tests as events of a {@link RecordingMetrics}, not as log wording. Close it
 * to detach, or register it as a JUnit extension ({@code @RegisterExtension final LogCapture log =
 * LogCapture.of(...)}), which closes it after each test, once what the test opened is closed: a server's
 * shutdown and its summary lines ("7 more protocol errors in the last 41 ms") belong to the test that caused them,
 * and come when the test's Vert.x closes, after the test's after-each callbacks.
 *
 * <p>A WARN or ERROR line that no capture takes is printed, and {@link LogCheck} names it in the run's summary as
 * not expected by its test.
 */
public final class LogCapture extends AppenderBase<ILoggingEvent> implements AutoCloseable, BeforeEachCallback {

  /** WARN and ERROR events that captures took in this JVM: the expected ones, kept off the console. */
  static final AtomicLong CAPTURED_WARNINGS = new AtomicLong();

  private final Logger logger;
  private final Level previousLevel;
  private final List<ILoggingEvent> events = new ArrayList<>();
  private final List<Watch> watches = new ArrayList<>();

  private record Watch(Level level, String fragment, Promise<String> promise) {
  }

  private record CountWatch(Level level, String fragment, long count, Promise<Void> promise) {
  }

  private final List<CountWatch> countWatches = new ArrayList<>();

  private LogCapture(Class<?> source) {
    this((Logger) LoggerFactory.getLogger(source), Level.DEBUG);
  }

  /** @param level the level to capture from, or null to keep the logger's own */
  private LogCapture(Logger logger, Level level) {
    this.logger = logger;
    previousLevel = logger.getLevel();
    if (level != null) {
      logger.setLevel(level);
    }
    // Captured lines stay out of the console; other loggers still print there.
    logger.setAdditive(false);
    start();
    logger.addAppender(this);
  }

  public static LogCapture of(Class<?> source) {
    return new LogCapture(source);
  }

  /** Captures the logger named {@code name} from DEBUG on (a logger whose name is kept apart from its class's). */
  public static LogCapture of(String name) {
    return new LogCapture((Logger) LoggerFactory.getLogger(name), Level.DEBUG);
  }

  /** Captures a logger (and the loggers under it) by name, at the level it already has. */
  public static LogCapture named(String name) {
    return new LogCapture((Logger) LoggerFactory.getLogger(name), null);
  }

  @Override
  protected synchronized void append(ILoggingEvent event) {
    if (event.getLevel().isGreaterOrEqual(Level.WARN)) {
      CAPTURED_WARNINGS.incrementAndGet();
    }
    events.add(event);
    watches.removeIf(w -> matches(event, w) && w.promise.tryComplete(event.getFormattedMessage()));
    countWatches.removeIf(w -> countNow(w.level, w.fragment) >= w.count && w.promise.tryComplete());
  }

  /** Completes once {@code count} messages at {@code level} containing {@code fragment} have been seen. */
  public synchronized Future<Void> awaitCount(Level level, String fragment, long count) {
    if (countNow(level, fragment) >= count) {
      return Future.succeededFuture();
    }
    CountWatch w = new CountWatch(level, fragment, count, Promise.promise());
    countWatches.add(w);
    return w.promise.future();
  }

  private long countNow(Level level, String fragment) {
    return events.stream().filter(e -> e.getLevel() == level && e.getFormattedMessage().contains(fragment)).count();
  }

  private static boolean matches(ILoggingEvent event, Watch w) {
    return event.getLevel() == w.level && event.getFormattedMessage().contains(w.fragment);
  }

  /** Completes with the first message at {@code level} containing {@code fragment}, past or future. */
  public synchronized Future<String> await(Level level, String fragment) {
    Watch w = new Watch(level, fragment, Promise.promise());
    for (ILoggingEvent e : events) {
      if (matches(e, w)) {
        return Future.succeededFuture(e.getFormattedMessage());
      }
    }
    watches.add(w);
    return w.promise.future();
  }

  public synchronized long count(Level level, String fragment) {
    return countNow(level, fragment);
  }

  /**
   * How many events were logged at {@code level}, whatever they say: for a test of how often a logger speaks
   * (a rate-limited line), which does not depend on the line's wording.
   */
  public synchronized long count(Level level) {
    return events.stream().filter(e -> e.getLevel() == level).count();
  }

  @Override
  public synchronized void close() {
    if (!isStarted()) {
      return;
    }
    logger.detachAppender(this);
    logger.setLevel(previousLevel);
    logger.setAdditive(true);
    stop();
  }

  /**
   * Closes with the test's store: JUnit closes a store's resources in the reverse order they were put, so this one,
   * put before the test method asks for its {@code Vertx}, closes after that Vert.x has closed.
   */
  @Override
  public void beforeEach(ExtensionContext context) {
    context.getStore(ExtensionContext.Namespace.create(LogCapture.class, this))
      .put(this, (ExtensionContext.Store.CloseableResource) this::close);
  }
}
