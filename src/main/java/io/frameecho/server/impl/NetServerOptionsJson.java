package io.frameecho.server.impl;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetServerOptions;

import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * The {@code netServerOptions} section: read by Vert.x's own converter ({@code new NetServerOptions(json)}), with the
 * names Vert.x gives its options in JSON ({@code pfxKeyCertOptions}, {@code pemTrustOptions}, {@code clientAuth},
 * {@code enabledCipherSuites}, ...) on whichever Vert.x line runs. Vert.x's converter skips what it does not read (an
 * unknown name, a value of another type); here such a key is refused, named, so that it fails at start rather than be
 * ignored: whatever Vert.x writes back for a key ({@code toJson}) must be what was given.
 */
public final class NetServerOptionsJson {

  private static final String SECTION = "netServerOptions.";

  private NetServerOptionsJson() {
  }

  /** @throws IllegalArgumentException naming the key ({@code netServerOptions.…}) Vert.x refuses or would ignore */
  public static NetServerOptions read(JsonObject json) {
    JsonObject defaults = new NetServerOptions().toJson();
    for (String name : json.fieldNames()) {
      // Vert.x's toJson writes them: its defaults are let through (and replaced), anything else belongs at the top level.
      if ((name.equals("host") || name.equals("port")) && !Objects.equals(json.getValue(name), defaults.getValue(name))) {
        throw new IllegalArgumentException(key(name) + ": set it with the top-level key '" + name + "'");
      }
    }
    NetServerOptions options;
    try {
      options = new NetServerOptions(json);
    } catch (RuntimeException e) {
      throw refusedKey(json, e);
    }
    JsonObject written = options.toJson();
    for (Map.Entry<String, Object> entry : json) {
      String name = entry.getKey();
      if (!written.containsKey(name)) {
        throw new IllegalArgumentException(key(name) + ": not a name Vert.x's NetServerOptions reads from JSON, so it would be ignored"
          + hint(name));
      }
      check(key(name), entry.getValue(), written.getValue(name));
    }
    return options;
  }

  /** {@code options} as JSON without what is at its default (nor host and port, which are frame-echo's own keys). */
  public static JsonObject write(NetServerOptions options) {
    JsonObject all = options.toJson();
    JsonObject defaults = new NetServerOptions().toJson();
    JsonObject json = new JsonObject();
    for (Map.Entry<String, Object> entry : all) {
      String name = entry.getKey();
      if (!name.equals("host") && !name.equals("port") && !Objects.equals(entry.getValue(), defaults.getValue(name))) {
        json.put(name, entry.getValue());
      }
    }
    return json;
  }

  private static String key(String name) {
    return SECTION + ConfigValues.escape(name);
  }

  private static String hint(String name) {
    return switch (name) {
      case "keyCertOptions" -> " (in JSON: pemKeyCertOptions, pfxKeyCertOptions or keyStoreOptions)";
      case "trustOptions" -> " (in JSON: pemTrustOptions, pfxTrustOptions or trustStoreOptions)";
      case "pfxKeyCertOptions", "keyStoreOptions" -> " (one form of key and certificate only: Vert.x reads pemKeyCertOptions first, "
        + "then keyStoreOptions, then pfxKeyCertOptions)";
      case "pfxTrustOptions", "trustStoreOptions" -> " (one form of trust only: Vert.x reads pemTrustOptions first, then "
        + "pfxTrustOptions, then trustStoreOptions)";
      default -> "";
    };
  }

  /**
   * What was given against what Vert.x made of it: the same value (numbers by value, arrays as sets), or, for an
   * object (key material, traffic shaping), names Vert.x reads (a singular name for a list it writes, such as
   * {@code certPath} for {@code certPaths}).
   */
  private static void check(String key, Object given, Object read) {
    if (given instanceof JsonObject object && read instanceof JsonObject readObject) {
      for (String name : object.fieldNames()) {
        if (!readObject.containsKey(name) && !readObject.containsKey(name + "s")) {
          throw new IllegalArgumentException(key + "." + ConfigValues.escape(name) + ": not a name Vert.x reads here, so it would be ignored");
        }
      }
      return;
    }
    if (given instanceof Number a && read instanceof Number b && a.doubleValue() == b.doubleValue()) {
      return;
    }
    if (given instanceof JsonArray a && read instanceof JsonArray b
      && a.stream().collect(Collectors.toSet()).equals(b.stream().collect(Collectors.toSet()))) {
      return;
    }
    if (!(given instanceof Number) && Objects.equals(given, read)) {
      return;
    }
    String actual = given == null ? "null" : given instanceof String text ? "the string " + ConfigValues.quote(text) : String.valueOf(given);
    String expected = given instanceof Number && (read instanceof Integer || read instanceof Long) ? "an integer" : expected(read);
    throw new IllegalArgumentException(key + ": expected " + expected + " but got " + actual + " (Vert.x would ignore it)");
  }

  private static String expected(Object read) {
    return read instanceof Boolean ? "true or false" : read instanceof Number ? "a number" : read instanceof String ? "a string"
      : read instanceof JsonArray ? "an array" : read instanceof JsonObject ? "an object" : "another value";
  }

  /** Vert.x refused the whole section: the first key it refuses alone names the problem. */
  private static IllegalArgumentException refusedKey(JsonObject json, RuntimeException whole) {
    for (Map.Entry<String, Object> entry : json) {
      Object value = entry.getValue();
      try {
        new NetServerOptions(new JsonObject().put(entry.getKey(), value));
      } catch (RuntimeException e) {
        return new IllegalArgumentException(key(entry.getKey()) + ": Vert.x refuses "
          + (value instanceof String text ? ConfigValues.quote(text) : value) + ": " + reason(e));
      }
    }
    return new IllegalArgumentException("netServerOptions: Vert.x refuses them: " + reason(whole));
  }

  private static String reason(RuntimeException e) {
    return ConfigValues.escape(e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
  }
}
