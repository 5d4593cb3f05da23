package io.frameecho.fuzz;

import io.frameecho.server.impl.ConfigValues;
import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.frameecho.server.FrameEchoOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetServerOptions;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Coverage-guided fuzzing of the configuration reader: {@link FrameEchoOptions#FrameEchoOptions(JsonObject)} with
 * arbitrary JSON, and the launcher's {@code FRAME_ECHO_*} variables and inline {@code -conf} JSON with arbitrary
 * text. The one failure documented is an {@link IllegalArgumentException} whose message is one line that starts
 * with what is wrong: the key ({@code port: ...}, {@code handler.timeoutMs: ...}, {@code netServerOptions.x: ...},
 * {@code unknown configuration key '...'}), the variable ({@code FRAME_ECHO_PORT: ...}) or {@code -conf}. Any
 * other exception, or a message on more lines or naming nothing the input has, is a finding. A configuration
 * that is accepted must survive {@code toJson} and the copy constructor unchanged, and its
 * {@code netServerOptions} must be ones Vert.x takes.
 * <p>
 * Without {@code JAZZER_FUZZ} this runs the inputs checked in under {@code ConfigFuzzTestInputs/} as regression
 * tests; the build's fuzzing executions fuzz each method for a bounded time (src/docs/DESIGN.md, "Fuzzing"). An input is
 * bytes that the generators below read: changing how they read them changes what the checked-in inputs mean.
 */
class ConfigFuzzTest {

  /**
   * Every key name of the configuration, at any level: those it had when the checked-in inputs were made, in a
   * fixed order, then any added since. A name is picked by an index from a fixed range ({@link #keyName}), so
   * that a key added later does not change which of these names a checked-in input picks.
   */
  private static final String[] NAMES = names("host", "port", "maxFrameSize", "writeQueueMaxSize", "handler", "type",
    "address", "timeoutMs", "maxInFlight", "maxConnections", "maxConnectionsPerIp", "maxBufferedBytes", "budgetGraceMs",
    "idleTimeoutMs", "frameTimeoutMs", "writeStallTimeoutMs", "lingerTimeoutMs", "shutdownTimeoutMs", "tls", "certPath",
    "keyPath", "netServerOptions", "transport", "drainDelayMs", "metrics", "enabled");
  /** The range of {@link #NAMES}' indexes: room for keys to come. */
  private static final int NAME_INDEXES = 64;
  /** A few of Vert.x's NetServerOptions. */
  private static final String[] NET_SERVER_OPTION_NAMES = {
    "tcpKeepAlive", "acceptBacklog", "reusePort", "idleTimeout", "idleTimeoutUnit", "sendBufferSize",
    "receiveBufferSize", "trafficClass", "soLinger", "tcpFastOpen", "useProxyProtocol", "proxyProtocolTimeout",
    "host", "port", "ssl", "logActivity", "registerWriteHandler", "sni"};
  private static final Object[] NUMBERS = {
    0, 1, -1, 1234, 65535, 65536, -65535, -65536, Integer.MAX_VALUE, Integer.MIN_VALUE, (long) Integer.MAX_VALUE + 1,
    (long) Integer.MIN_VALUE - 1, 4294967296L, Long.MAX_VALUE, Long.MIN_VALUE, new BigInteger("9223372036854775808"),
    new BigInteger("-9223372036854775809"), new BigInteger("1" + "0".repeat(400)), 9.0e18, -9.0e18, 8.99e18, 1.0e19,
    2147483647.0, 2147483648.0, -2147483649.0, 0.5, -0.0, Double.MAX_VALUE, Double.NaN, Double.POSITIVE_INFINITY,
    Double.NEGATIVE_INFINITY, Double.MIN_VALUE, new BigDecimal("1.0"), new BigDecimal("1e400"), 1.5f};
  private static final String[] STRINGS = {
    "", " ", "echo", "eventbus", "auto", "nio", "epoll", "io_uring", "0.0.0.0", "127.0.0.1", "::", "a.pem",
    "frame-echo.requests", "\n", "a\nb", "\r", "\t", "\"", "'", "\\", "\u0000", "\u2028", "é", "true", "1234", "{}",
    "SECONDS", "weeks"};
  private static final String[] VALUES = {
    "", " ", "0", "1", "-1", "+1", " 7 ", "1234", "65536", "2147483647", "2147483648", "-2147483649",
    "9223372036854775807", "9223372036854775808", "1e3", "0x10", "1.0", "true", "false", "TRUE", " true", "yes",
    "echo", "eventbus", "nio", "io_uring", "127.0.0.1", "{}", "{", "}", "[]", "null", "{\"tcpKeepAlive\":true}",
    "{\"idleTimeout\":-1}", "{\"port\":1}", "{\"acceptBacklog\":\"x\"}", "{} x", "{\"a\":NaN}", "{\"a\":1,\"a\":2}",
    "\n", "1\n", "a\nb", "{\n\"x\"}", "\u0000"};

  private static String[] names(String... known) {
    Set<String> names = new LinkedHashSet<>(List.of(known));
    JsonObject all = ConfigValues.allKeys();
    for (String key : all.fieldNames()) {
      if (key.equals("framing")) {
        // Added after the others, so that the names before keep their indexes.
        continue;
      }
      names.add(key);
      if (ConfigValues.SECTIONS.contains(key)) {
        names.addAll(all.getJsonObject(key).fieldNames());
      }
    }
    names.add("framing");
    names.addAll(io.frameecho.protocol.LengthField.DEFAULT.toJson().fieldNames());
    if (names.size() > NAME_INDEXES) {
      throw new IllegalStateException("more keys than ConfigFuzzTest.NAME_INDEXES: raise it (the inputs then mean other things)");
    }
    return names.toArray(String[]::new);
  }

  /** A key name of the configuration; an index past the names picks one of them all the same. */
  private static String keyName(FuzzedDataProvider data) {
    int index = data.consumeInt(0, NAME_INDEXES - 1);
    return NAMES[index % NAMES.length];
  }

  // -------------------------------------------------------------------------------------------------------------
  // FrameEchoOptions from JSON

  @FuzzTest(maxDuration = "30s")
  void jsonOptions(FuzzedDataProvider data) {
    JsonObject json = object(data, 0);
    readOptions(json);
  }

  /** Reads {@code json}: accepted, and then consistent; or refused with a documented error. */
  static void readOptions(JsonObject json) {
    FrameEchoOptions options;
    try {
      options = new FrameEchoOptions(json);
    } catch (IllegalArgumentException e) {
      assertDocumented(e, keyPaths(json));
      return;
    }
    JsonObject written = options.toJson();
    assertEquals(written.encode(), new FrameEchoOptions(written).toJson().encode(), "toJson read back");
    assertEquals(written.encode(), new FrameEchoOptions(options).toJson().encode(), "the copy constructor");
    try {
      new NetServerOptions(written.getJsonObject("netServerOptions"));
    } catch (RuntimeException e) {
      fail("netServerOptions " + written.getJsonObject("netServerOptions").encode() + " accepted, but Vert.x refuses them: " + e, e);
    }
  }

  private static JsonObject object(FuzzedDataProvider data, int depth) {
    JsonObject json = new JsonObject();
    int n = data.consumeInt(0, depth == 0 ? 6 : 3);
    for (int i = 0; i < n; i++) {
      json.put(name(data), value(data, depth));
    }
    return json;
  }

  private static String name(FuzzedDataProvider data) {
    return switch (data.consumeInt(0, 3)) {
      case 0, 1 -> keyName(data);
      case 2 -> data.pickValue(NET_SERVER_OPTION_NAMES);
      default -> data.consumeString(data.consumeInt(0, 16));
    };
  }

  private static Object value(FuzzedDataProvider data, int depth) {
    switch (data.consumeInt(0, 13)) {
      case 0:
        return null;
      case 1:
        return data.consumeBoolean();
      case 2:
        return data.consumeInt();
      case 3:
        return data.consumeLong();
      case 4:
        return data.pickValue(NUMBERS);
      case 5:
        return data.consumeDouble();
      case 6: {
        byte[] magnitude = data.consumeBytes(data.consumeInt(1, 24));
        return magnitude.length == 0 ? BigInteger.ZERO : new BigInteger(magnitude);
      }
      case 7:
        return new BigDecimal(BigInteger.valueOf(data.consumeLong()), data.consumeInt(-400, 400));
      case 8:
        return data.consumeString(data.consumeInt(0, 24));
      case 9:
        return data.pickValue(STRINGS);
      case 10: {
        JsonArray array = new JsonArray();
        int n = depth < 3 ? data.consumeInt(0, 3) : 0;
        for (int i = 0; i < n; i++) {
          array.add(value(data, depth + 1));
        }
        return array;
      }
      default:
        return depth < 3 ? object(data, depth + 1) : new JsonObject();
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // The launcher's FRAME_ECHO_* variables and inline -conf

  @FuzzTest(maxDuration = "30s")
  void environmentVariables(FuzzedDataProvider data) {
    Map<String, String> environment = new LinkedHashMap<>();
    int n = data.consumeInt(0, 5);
    for (int i = 0; i < n; i++) {
      environment.put(variable(data), data.consumeBoolean() ? data.pickValue(VALUES) : data.consumeString(data.consumeInt(0, 32)));
    }
    // Inline JSON only: anything else would be read as a file name.
    String conf = data.consumeBoolean() ? null : "{" + data.consumeRemainingAsString();
    readEnvironment(conf, environment);
  }

  /** What the launcher does with a {@code -conf} argument and the environment, up to the options. */
  static void readEnvironment(String conf, Map<String, String> environment) {
    JsonObject config;
    try {
      config = ConfigReaders.effective(conf, environment);
    } catch (IllegalArgumentException e) {
      List<String> named = new ArrayList<>();
      environment.keySet().forEach(name -> named.add(ConfigReaders.oneLine(name)));
      named.add("-conf");
      assertDocumented(e, named);
      return;
    }
    assertNotNull(config);
    readOptions(config);
  }

  private static String variable(FuzzedDataProvider data) {
    return switch (data.consumeInt(0, 7)) {
      case 0, 1, 2, 3 -> "FRAME_ECHO_" + upperSnake(keyName(data));
      case 4 -> "FRAME_ECHO_" + upperSnake(keyName(data)) + "_" + upperSnake(keyName(data));
      case 5 -> data.pickValue(new String[] {"FRAME_ECHO_LOG_LEVEL", "FRAME_ECHO_LOG_FORMAT", "FRAME_ECHO_DEBUG", "PATH", "FRAME_ECHO_"});
      default -> "FRAME_ECHO_" + data.consumeAsciiString(data.consumeInt(0, 12));
    };
  }

  private static String upperSnake(String name) {
    return name.replaceAll("([A-Z])", "_$1").toUpperCase(java.util.Locale.ROOT);
  }

  // -------------------------------------------------------------------------------------------------------------
  // The oracle

  /**
   * A documented configuration error: an {@link IllegalArgumentException} with a one-line message that starts
   * with one of {@code names} and a colon ({@code port: 65536 is out of range ...}), with a key under
   * {@code netServerOptions.}, or with {@code unknown configuration key '}.
   */
  static void assertDocumented(IllegalArgumentException e, List<String> names) {
    String message = e.getMessage();
    assertNotNull(message, "an error without a message");
    assertFalse(message.isBlank(), "an empty message");
    assertFalse(message.contains("\n") || message.contains("\r"), () -> "a message on more than one line: " + message);
    if (message.startsWith("unknown configuration key '")) {
      return;
    }
    for (String name : names) {
      if (message.startsWith(name + ":") || name.equals("netServerOptions") && message.startsWith("netServerOptions.")) {
        return;
      }
    }
    fail("a message that does not start with a key of the input " + names + ": " + message, e);
  }

  /** The key paths of a configuration: each top-level key, and a section's keys as {@code section.key}. */
  static List<String> keyPaths(JsonObject json) {
    List<String> paths = new ArrayList<>();
    for (Map.Entry<String, Object> entry : json) {
      paths.add(entry.getKey());
      if (entry.getValue() instanceof JsonObject section) {
        for (String inner : section.fieldNames()) {
          paths.add(entry.getKey() + "." + inner);
        }
      }
    }
    return paths;
  }

  /** Not a fuzz test: the oracle itself, on errors it must accept and refuse. */
  @org.junit.jupiter.api.Test
  void theOracleKnowsADocumentedError() {
    assertDocumented(new IllegalArgumentException("port: 65536 is out of range"), List.of("port"));
    assertDocumented(new IllegalArgumentException("handler.timeoutMs: 0 must be positive"), List.of("handler", "handler.timeoutMs"));
    assertDocumented(new IllegalArgumentException("unknown configuration key 'x'"), List.of("x"));
    assertThrowsAssertion(() -> assertDocumented(new IllegalArgumentException("port: a\nb"), List.of("port")));
    assertThrowsAssertion(() -> assertDocumented(new IllegalArgumentException("host: x"), List.of("port")));
    assertTrue(keyPaths(new JsonObject().put("handler", new JsonObject().put("type", 1))).contains("handler.type"));
  }

  private static void assertThrowsAssertion(Runnable check) {
    try {
      check.run();
    } catch (AssertionError expected) {
      return;
    }
    fail("the oracle let a bad error through");
  }
}
