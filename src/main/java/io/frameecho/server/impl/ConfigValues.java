package io.frameecho.server.impl;

import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.impl.shared.EditDistance;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The strictness that Vert.x's generated JSON converters lack. A converter skips a key it does not know and a value of
 * another type than its setter's; {@link #check} refuses both first, naming the key, so that a bad configuration fails
 * at start instead of being ignored. Ranges stay in the setters, which the converter calls. Errors are one line,
 * whatever the text they quote (see {@link #quote}).
 */
public final class ConfigValues {

  /** The keys of {@link FrameEchoOptions} that hold a section of their own keys (a variable per key for each). */
  public static final List<String> SECTIONS = List.of("handler", "metrics", "tls");

  private ConfigValues() {
  }

  /**
   * Every key of the configuration, each with a value of the type it takes: the defaults, and the {@code tls} section
   * (unset by default) with its two paths.
   */
  public static JsonObject allKeys() {
    return new FrameEchoOptions().toJson().put("tls", new JsonObject().put("certPath", "").put("keyPath", ""));
  }

  /**
   * Refuses, naming the key, a key of {@code json} that {@code keys} lacks (with the nearest known key) and a value of
   * another type than {@code keys} holds for it; JSON null is let through for the keys in {@code nullable} only.
   *
   * @param prefix the section's prefix for messages ({@code "handler."}), or {@code ""} at the top level
   */
  public static void check(JsonObject json, String prefix, JsonObject keys, Set<String> nullable) {
    for (Map.Entry<String, Object> entry : json) {
      String name = entry.getKey();
      String key = prefix + escape(name);
      Object value = entry.getValue();
      if (!keys.containsKey(name)) {
        String nearest = nearest(keys.fieldNames(), name);
        throw new IllegalArgumentException("unknown configuration key '" + key + "'"
          + (nearest != null ? " (did you mean '" + prefix + nearest + "'?)" : "") + "; known keys: "
          + prefix + String.join(", " + prefix, keys.fieldNames()));
      }
      if (value == null && nullable.contains(name)) {
        continue;
      }
      Object type = keys.getValue(name);
      if (type instanceof Integer) {
        integer(key, value);
      } else if (type instanceof Long) {
        longInteger(key, value);
      } else if (type instanceof Boolean && !(value instanceof Boolean)) {
        throw wrongType(key, "true or false", value);
      } else if (type instanceof String && !(value instanceof String)) {
        throw wrongType(key, "a string", value);
      } else if (type instanceof JsonObject && !(value instanceof JsonObject)) {
        throw wrongType(key, "an object", value);
      }
    }
  }

  /**
   * The known key a mistyped {@code name} most likely meant: the nearest by edit distance (case ignored), if it is
   * within a third of the name's length (at least 2 edits), else null.
   */
  static String nearest(Set<String> keys, String name) {
    String best = null;
    int bestDistance = Math.max(2, name.length() / 3) + 1;
    for (String key : keys) {
      int d = EditDistance.between(name.toLowerCase(Locale.ROOT), key.toLowerCase(Locale.ROOT));
      if (d < bestDistance) {
        best = key;
        bestDistance = d;
      }
    }
    return best;
  }

  /**
   * {@code text} as a JSON string literal ({@code "nio"}), as configuration errors quote a value: a line break or
   * another control character in it is written escaped ({@code "a\nb"}), so that the error stays one line.
   */
  public static String quote(String text) {
    return Json.encode(text);
  }

  /** {@code text} as within {@link #quote}'s quotes: a key name in an error, escaped the same way. */
  public static String escape(String text) {
    String quoted = quote(text);
    return quoted.substring(1, quoted.length() - 1);
  }

  /** A host name or address to bind: not empty. */
  public static String requireHost(String key, String host) {
    if (host == null || host.isBlank()) {
      throw new IllegalArgumentException(key + ": must be a non-empty host name or address");
    }
    return host;
  }

  /** {@code value}, refused below 1 (an {@code int} or a {@code long}: the message reads the same). */
  public static <N extends Number> N requirePositive(String key, N value) {
    if (value.longValue() <= 0) {
      throw new IllegalArgumentException(key + ": " + value + " must be positive");
    }
    return value;
  }

  /** {@code value}, refused if negative, for a setting that 0 turns off. */
  public static <N extends Number> N requireNonNegative(String key, N value) {
    if (value.longValue() < 0) {
      throw new IllegalArgumentException(key + ": " + value + " cannot be negative (0 turns it off)");
    }
    return value;
  }

  /**
   * {@code path}, refused if longer than {@code maxBytes} in UTF-8 (a unix socket path has at most 107; {@code why}
   * says what the limit is) or holding a NUL, which would cut the path the kernel sees.
   */
  public static String requireSocketPath(String key, String path, int maxBytes, String why) {
    int bytes = java.util.Objects.requireNonNull(path, key).getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
    if (bytes > maxBytes) {
      throw new IllegalArgumentException(key + ": " + quote(path) + " is " + bytes + " bytes long; " + why);
    }
    if (path.indexOf('\0') >= 0) {
      throw new IllegalArgumentException(key + ": " + quote(path) + " contains a NUL character");
    }
    return path;
  }

  /**
   * An integral JSON number that fits an {@code int}. Fractions, strings and numbers past 2^31 - 1 are refused rather
   * than truncated (as the converter's {@code intValue()} would), so that {@code 4294967296} never silently becomes 0.
   */
  static int integer(String key, Object value) {
    long l = longInteger(key, value);
    if (l < Integer.MIN_VALUE || l > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(key + ": " + value + " is out of range (at most " + Integer.MAX_VALUE + ")");
    }
    return (int) l;
  }

  /** An integral JSON number that fits a {@code long}. */
  static long longInteger(String key, Object value) {
    if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte) {
      return ((Number) value).longValue();
    }
    if (value instanceof Number number) {
      double d = number.doubleValue();
      if (d == Math.rint(d) && Math.abs(d) < 9.0e18) {
        return (long) d;
      }
    }
    throw wrongType(key, "an integer", value);
  }

  private static IllegalArgumentException wrongType(String key, String expected, Object value) {
    String actual = value == null ? "null" : value instanceof String text ? "the string " + quote(text) : String.valueOf(value);
    return new IllegalArgumentException(key + ": expected " + expected + " but got " + actual);
  }
}
