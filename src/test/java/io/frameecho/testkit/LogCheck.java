package io.frameecho.testkit;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * The run's word on its WARN and ERROR lines, printed at the end of each test JVM's output (registered for every
 * JUnit run in META-INF/services): a line a test causes on purpose is captured by that test ({@link LogCapture}) and
 * only counted here; any other WARN or ERROR line was printed where it happened, and is named again here with the
 * test that was running, so that an unexpected one (a blocked event loop, a clock jump, a failure no test asked
 * for) is visible in the summary instead of lost in the output. It fails nothing: on a busy machine an event loop
 * the OS did not schedule for two seconds is reported as blocked, and that is worth seeing, not a failed build.
 */
public final class LogCheck implements TestExecutionListener {

  /** Unexpected lines named one by one; the rest are counted. */
  private static final int NAMED = 20;
  private static final String PREFIX = "[log check] ";

  private final List<String> unexpected = new ArrayList<>();
  private long unexpectedCount;
  private volatile String running = "before the first test";
  private Printed printed;

  /** Sees what reaches the root logger: the lines printed, not those a capture took. */
  private final class Printed extends AppenderBase<ILoggingEvent> {
    @Override
    protected void append(ILoggingEvent event) {
      if (!event.getLevel().isGreaterOrEqual(Level.WARN)) {
        return;
      }
      String message = event.getFormattedMessage();
      int end = message.indexOf('\n');
      String line = running + ": " + event.getLevel() + " " + event.getLoggerName() + " - "
        + (end < 0 ? message : message.substring(0, end));
      synchronized (LogCheck.this) {
        unexpectedCount++;
        if (unexpected.size() < NAMED) {
          unexpected.add(line.length() > 300 ? line.substring(0, 300) + "..." : line);
        }
      }
    }
  }

  @Override
  public void testPlanExecutionStarted(TestPlan testPlan) {
    if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
      printed = new Printed();
      printed.setContext(context);
      printed.start();
      context.getLogger(Logger.ROOT_LOGGER_NAME).addAppender(printed);
    }
  }

  @Override
  public void executionStarted(TestIdentifier test) {
    if (test.getSource().orElse(null) instanceof MethodSource method) {
      String type = method.getClassName();
      running = type.substring(type.lastIndexOf('.') + 1) + "." + method.getMethodName();
    }
  }

  @Override
  public void executionFinished(TestIdentifier test, TestExecutionResult result) {
    if (test.getSource().orElse(null) instanceof MethodSource) {
      running = "after " + running.replaceFirst("^after ", "");
    }
  }

  @Override
  public void testPlanExecutionFinished(TestPlan testPlan) {
    if (printed == null) {
      return;
    }
    ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger(Logger.ROOT_LOGGER_NAME).detachAppender(printed);
    printed.stop();
    long expected = LogCapture.CAPTURED_WARNINGS.get();
    StringBuilder out = new StringBuilder();
    synchronized (this) {
      if (unexpectedCount == 0) {
        out.append(PREFIX).append("no unexpected WARN or ERROR line; ").append(expected)
          .append(" expected ones were captured by the tests that cause them and not printed\n");
      } else {
        out.append(PREFIX).append(unexpectedCount).append(" WARN/ERROR line(s) above were not expected by any test (")
          .append(expected).append(" expected ones were captured and not printed); during:\n");
        unexpected.forEach(line -> out.append(PREFIX).append("  ").append(line).append('\n'));
        if (unexpectedCount > unexpected.size()) {
          out.append(PREFIX).append("  and ").append(unexpectedCount - unexpected.size()).append(" more\n");
        }
      }
    }
    System.out.print(out);
    System.out.flush();
  }
}
