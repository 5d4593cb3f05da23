package io.frameecho.cli;

import io.frameecho.server.impl.ConfigValues;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The launcher's configuration with environment variables folded in, as containers expect: every key of
 * {@code conf/config.json} has a variable, {@code FRAME_ECHO_} and the key in upper snake case
 * ({@code port} → {@code FRAME_ECHO_PORT}, {@code handler.maxInFlight} → {@code FRAME_ECHO_HANDLER_MAX_IN_FLIGHT}).
 * Precedence, lowest first: a {@code -conf} file, the environment, an inline {@code -conf} JSON string.
 * A variable with the prefix that names no key, or a value of the wrong type, is an error.
 */
final class EnvironmentConfig {

  static final String PREFIX = "FRAME_ECHO_";
  /** Variables with the prefix that are not configuration keys (logging, and the stack-trace switch). */
  private static final Set<String> NOT_CONFIG = Set.of("FRAME_ECHO_LOG_LEVEL", "FRAME_ECHO_LOG_FORMAT", "FRAME_ECHO_DEBUG");

  /** Variable name to key path (dot-separated), with a value of the key's type, from the configuration's keys. */
  private static final Map<String, Map.Entry<String, Object>> VARIABLES = variables();

  private EnvironmentConfig() {
  }

  /** One variable per key; a section's keys each have theirs ({@code tls.certPath} → {@code FRAME_ECHO_TLS_CERT_PATH}). */
  private static Map<String, Map.Entry<String, Object>> variables() {
    Map<String, Map.Entry<String, Object>> vars = new LinkedHashMap<>();
    JsonObject keys = ConfigValues.allKeys();
    for (String name : keys.fieldNames()) {
      if (ConfigValues.SECTIONS.contains(name)) {
        keys.getJsonObject(name).forEach(inner -> vars.put(variableName(name + "." + inner.getKey()),
          Map.entry(name + "." + inner.getKey(), inner.getValue())));
      } else {
        vars.put(variableName(name), Map.entry(name, keys.getValue(name)));
      }
    }
    return vars;
  }

  /** {@code handler.maxInFlight} → {@code FRAME_ECHO_HANDLER_MAX_IN_FLIGHT}. */
  static String variableName(String keyPath) {
    StringBuilder name = new StringBuilder(PREFIX);
    for (char c : keyPath.toCharArray()) {
      if (c == '.') {
        name.append('_');
      } else if (Character.isUpperCase(c)) {
        name.append('_').append(c);
      } else {
        name.append(Character.toUpperCase(c));
      }
    }
    return name.toString();
  }

  static Set<String> knownVariables() {
    return new TreeSet<>(VARIABLES.keySet());
  }

  /**
   * The configuration the verticle gets.
   *
   * @param confArgument the launcher's {@code -conf} value: a file path, a JSON string, or null
   * @throws IllegalArgumentException naming the variable or the file on a bad value
   */
  static JsonObject effective(String confArgument, Map<String, String> environment) {
    JsonObject config = new JsonObject();
    JsonObject inline = null;
    if (confArgument != null) {
      if (looksLikeFile(confArgument)) {
        config = readFile(confArgument);
      } else {
        inline = parse(confArgument, "-conf");
      }
    }
    config.mergeIn(fromEnvironment(environment), true);
    if (inline != null) {
      config.mergeIn(inline, true);
    }
    return config;
  }

  private static boolean looksLikeFile(String argument) {
    return !argument.trim().startsWith("{");
  }

  /** A {@code -conf} value that is not inline JSON is a file, and must be one. */
  private static JsonObject readFile(String argument) {
    Path file;
    try {
      file = Path.of(argument);
    } catch (java.nio.file.InvalidPathException e) {
      throw new IllegalArgumentException("-conf " + argument + ": neither a file name nor a JSON object");
    }
    if (!Files.exists(file)) {
      throw new IllegalArgumentException("-conf " + argument + ": the file does not exist (give a file or an inline JSON object)");
    }
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException("-conf " + argument + ": not a regular file");
    }
    try {
      return parse(Files.readString(file), file.toString());
    } catch (IOException e) {
      throw new IllegalArgumentException("-conf " + file + ": cannot read it: " + e.getMessage());
    }
  }

  private static JsonObject parse(String text, String source) {
    try {
      return new JsonObject(text);
    } catch (DecodeException e) {
      throw new IllegalArgumentException(source + ": not a JSON object: " + decodeProblem(e));
    }
  }

  /** Where Jackson's messages say a problem is: "[Source: ...; line: 1, column: 2]", after "at" or "start marker at". */
  private static final Pattern LOCATION = Pattern.compile(
    "\\s*(\\(start marker )?at \\[Source: [^\\]]*line: (\\d+), column: (\\d+)\\]\\)?");

  /**
   * What is wrong with some JSON, on one line: the parser's message (which spans two lines, the second naming
   * the source only to say that it is not shown) with its locations as "at line 1, column 2".
   */
  static String decodeProblem(DecodeException e) {
    String message = e.getMessage() == null ? "cannot be decoded" : e.getMessage();
    Matcher location = LOCATION.matcher(message);
    StringBuilder problem = new StringBuilder();
    while (location.find()) {
      String where = "line " + location.group(2) + ", column " + location.group(3);
      location.appendReplacement(problem, Matcher.quoteReplacement(
        location.group(1) != null ? " (started at " + where + ")" : " at " + where));
    }
    location.appendTail(problem);
    return oneLine(problem.toString().strip());
  }

  /** {@code text} with each line break or other control character written as an escape, as in a JSON string. */
  static String oneLine(String text) {
    StringBuilder line = new StringBuilder(text.length());
    for (char c : text.toCharArray()) {
      if (c == '\n') {
        line.append("\\n");
      } else if (c == '\r') {
        line.append("\\r");
      } else if (c == '\t') {
        line.append("\\t");
      } else if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
        line.append(String.format("\\u%04x", (int) c));
      } else {
        line.append(c);
      }
    }
    return line.toString();
  }

  /** The overrides the environment holds, as a configuration fragment. */
  static JsonObject fromEnvironment(Map<String, String> environment) {
    JsonObject overrides = new JsonObject();
    for (Map.Entry<String, String> variable : new TreeSet<>(environment.keySet()).stream()
        .map(name -> Map.entry(name, environment.get(name))).toList()) {
      String name = variable.getKey();
      if (!name.startsWith(PREFIX) || NOT_CONFIG.contains(name)) {
        continue;
      }
      Map.Entry<String, Object> key = VARIABLES.get(name);
      if (key == null) {
        throw new IllegalArgumentException(oneLine(name) + ": no such frame-echo setting; known variables: "
          + String.join(", ", knownVariables()) + " (and FRAME_ECHO_LOG_LEVEL, FRAME_ECHO_LOG_FORMAT, FRAME_ECHO_DEBUG)");
      }
      put(overrides, key.getKey(), typed(name, variable.getValue(), key.getValue()));
    }
    return overrides;
  }

  /** {@code text} as a value of {@code sample}'s JSON type. */
  private static Object typed(String name, String text, Object sample) {
    String value = text.trim();
    if (sample instanceof Boolean) {
      if (value.equals("true") || value.equals("false")) {
        return Boolean.valueOf(value);
      }
      throw new IllegalArgumentException(name + ": " + Json.encode(text) + " is not true or false");
    }
    if (sample instanceof Number) {
      try {
        return Long.parseLong(value);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(name + ": " + Json.encode(text) + " is not an integer");
      }
    }
    return sample instanceof JsonObject ? parse(value, name) : text;
  }

  private static void put(JsonObject target, String keyPath, Object value) {
    int dot = keyPath.indexOf('.');
    if (dot < 0) {
      target.put(keyPath, value);
      return;
    }
    String head = keyPath.substring(0, dot);
    JsonObject nested = target.getJsonObject(head);
    if (nested == null) {
      nested = new JsonObject();
      target.put(head, nested);
    }
    put(nested, keyPath.substring(dot + 1), value);
  }
}
