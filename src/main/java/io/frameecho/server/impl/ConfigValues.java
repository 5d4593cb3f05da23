package io.frameecho.server.impl;

/**
 * Typed reads of JSON configuration values, failing with the key's name and the reason: one line, whatever the
 * text it quotes (see {@link #quote}).
 */
public final class ConfigValues {

  private ConfigValues() {
  }

  /**
   * {@code text} as a JSON string literal ({@code "nio"}), as configuration errors quote a value: a line break or
   * another control character in it is written escaped ({@code "a\nb"}), so that the error stays one line.
   */
  public static String quote(String text) {
    return io.vertx.core.json.Json.encode(text);
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

  /** Refuses a value below 1 (an {@code int} setting's too: the message reads the same). */
  public static void requirePositive(String key, long value) {
    if (value <= 0) {
      throw new IllegalArgumentException(key + ": " + value + " must be positive");
    }
  }

  /** Refuses a negative value for a setting that 0 turns off. */
  public static void requireNonNegative(String key, long value) {
    if (value < 0) {
      throw new IllegalArgumentException(key + ": " + value + " cannot be negative (0 turns it off)");
    }
  }

  public static boolean bool(String key, Object value) {
    if (value instanceof Boolean) {
      return (Boolean) value;
    }
    throw wrongType(key, "true or false", value);
  }

  public static String string(String key, Object value) {
    if (value instanceof String) {
      return (String) value;
    }
    throw wrongType(key, "a string", value);
  }

  public static io.vertx.core.json.JsonObject object(String key, Object value) {
    if (value instanceof io.vertx.core.json.JsonObject) {
      return (io.vertx.core.json.JsonObject) value;
    }
    if (value instanceof java.util.Map) {
      @SuppressWarnings("unchecked")
      java.util.Map<String, Object> map = (java.util.Map<String, Object>) value;
      return new io.vertx.core.json.JsonObject(map);
    }
    throw wrongType(key, "an object", value);
  }

  /**
   * An integral JSON number that fits an {@code int}. Fractions, strings and numbers past 2^31 - 1 are
   * rejected rather than truncated, so that {@code 4294967296} never silently becomes 0.
   */
  public static int integer(String key, Object value) {
    if (value instanceof Integer || value instanceof Short || value instanceof Byte) {
      return ((Number) value).intValue();
    }
    if (value instanceof Long) {
      long l = (Long) value;
      if (l < Integer.MIN_VALUE || l > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(key + ": " + l + " is out of range (at most " + Integer.MAX_VALUE + ")");
      }
      return (int) l;
    }
    if (value instanceof Number) {
      double d = ((Number) value).doubleValue();
      if (d == Math.rint(d) && !Double.isInfinite(d)) {
        if (d < Integer.MIN_VALUE || d > Integer.MAX_VALUE) {
          throw new IllegalArgumentException(key + ": " + value + " is out of range (at most " + Integer.MAX_VALUE + ")");
        }
        return (int) d;
      }
    }
    throw wrongType(key, "an integer", value);
  }

  /** An integral JSON number that fits a {@code long}. */
  public static long longInteger(String key, Object value) {
    if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte) {
      return ((Number) value).longValue();
    }
    if (value instanceof Number) {
      double d = ((Number) value).doubleValue();
      if (d == Math.rint(d) && Math.abs(d) < 9.0e18) {
        return (long) d;
      }
    }
    throw wrongType(key, "an integer", value);
  }

  private static IllegalArgumentException wrongType(String key, String expected, Object value) {
    String actual = value == null ? "null" : value instanceof String ? "the string " + quote((String) value) : String.valueOf(value);
    return new IllegalArgumentException(key + ": expected " + expected + " but got " + actual);
  }
}
