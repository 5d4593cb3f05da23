package io.frameecho.cli;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Checks {@code FRAME_ECHO_LOG_LEVEL} and {@code FRAME_ECHO_LOG_FORMAT} before Logback starts: Logback
 * turns an unknown level into DEBUG without a word, and an unknown format into a page of status lines
 * and no logging at all. Case does not matter; the checked value is handed to {@code logback.xml} as a
 * system property of the same name (Logback looks at system properties before the environment).
 */
final class LogSettings {

  static final String LEVEL = "FRAME_ECHO_LOG_LEVEL";
  static final String FORMAT = "FRAME_ECHO_LOG_FORMAT";
  static final List<String> LEVELS = List.of("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "OFF");
  static final List<String> FORMATS = List.of("text", "json");

  private LogSettings() {
  }

  /**
   * @return the system properties {@code logback.xml} should see (empty when the variables are unset)
   * @throws IllegalArgumentException naming the variable and its allowed values
   */
  static Map<String, String> check(Map<String, String> environment) {
    Map<String, String> properties = new java.util.LinkedHashMap<>();
    String level = environment.get(LEVEL);
    if (level != null) {
      String upper = level.trim().toUpperCase(Locale.ROOT);
      if (!LEVELS.contains(upper)) {
        throw new IllegalArgumentException(LEVEL + ": \"" + level + "\" is not a level; use one of "
          + String.join(", ", LEVELS) + " (default INFO)");
      }
      properties.put(LEVEL, upper);
    }
    String format = environment.get(FORMAT);
    if (format != null) {
      String lower = format.trim().toLowerCase(Locale.ROOT);
      if (!FORMATS.contains(lower)) {
        throw new IllegalArgumentException(FORMAT + ": \"" + format + "\" is not a log format; use one of "
          + String.join(", ", FORMATS) + " (default text)");
      }
      properties.put(FORMAT, lower);
    }
    return properties;
  }
}
