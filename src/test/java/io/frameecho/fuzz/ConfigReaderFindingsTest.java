package io.frameecho.fuzz;

import io.frameecho.server.FrameEchoOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What {@link ConfigFuzzTest} found in the configuration reader, as plain tests: each input, and the one-line
 * error naming the key that it gets now. Their fuzzer-encoded inputs are in {@code ConfigFuzzTestInputs/}.
 */
class ConfigReaderFindingsTest {

  private static String error(JsonObject config) {
    return assertThrows(IllegalArgumentException.class, () -> new FrameEchoOptions(config)).getMessage();
  }

  private static String environmentError(String conf, Map<String, String> environment) {
    return assertThrows(IllegalArgumentException.class, () -> ConfigReaders.effective(conf, environment)).getMessage();
  }

  // Text of the input quoted in the message: a line break in it made the message two lines.

  @Test
  void anUnknownKeyWithALineBreakIsNamedOnOneLine() {
    // Found by the fuzzer: {"\n": ...} gave "unknown configuration key '" and "'; known keys: ..." on two lines.
    assertTrue(error(new JsonObject().put("\n", 1)).startsWith("unknown configuration key '\\n'; known keys: host, port,"));
    assertTrue(error(new JsonObject().put("handler", new JsonObject().put("type\r\n", "echo")))
      .startsWith("unknown configuration key 'handler.type\\r\\n' (did you mean 'handler.type'?); known keys: handler.type,"));
  }

  @Test
  void aStringValueWithALineBreakIsQuotedOnOneLine() {
    assertEquals("port: expected an integer but got the string \"12\\n34\"", error(new JsonObject().put("port", "12\n34")));
    assertEquals("transport: \"nio\\n\" is not one of auto, nio, epoll, io_uring", error(new JsonObject().put("transport", "nio\n")));
    assertEquals("handler.type: \"echo\\u0000\" is not one of \"echo\", \"eventbus\" or the name of a RequestHandler class",
      error(new JsonObject().put("handler", new JsonObject().put("type", "echo\u0000"))));
    assertEquals("netServerOptions.tcp\\nKeepAlive: not a name Vert.x's NetServerOptions reads from JSON, so it would be ignored",
      error(new JsonObject().put("netServerOptions", new JsonObject().put("tcp\nKeepAlive", true))));
  }

  @Test
  void aVariableWithALineBreakIsQuotedOnOneLine() {
    assertEquals("FRAME_ECHO_PORT: \"12\\n34\" is not an integer", environmentError(null, Map.of("FRAME_ECHO_PORT", "12\n34")));
    assertEquals("FRAME_ECHO_METRICS_ENABLED: \"yes\\n\" is not true or false",
      environmentError(null, Map.of("FRAME_ECHO_METRICS_ENABLED", "yes\n")));
    assertTrue(environmentError(null, Map.of("FRAME_ECHO_PO\nRT", "1")).startsWith("FRAME_ECHO_PO\\nRT: no such frame-echo setting;"));
  }

  // JSON that does not parse: the parser's message is two lines, the second only saying where.

  @Test
  void jsonThatDoesNotParseIsSaidOnOneLine() {
    // Found by the fuzzer (its empty input): -conf "{" gave the parser's message on two lines.
    assertEquals("-conf: not a JSON object: Unexpected end-of-input: expected close marker for Object "
      + "(started at line 1, column 1) at line 1, column 2", environmentError("{", Map.of()));
    // Jackson's own words (and the column it names) differ between the Jackson versions of Vert.x's lines.
    String trailing = environmentError(null, Map.of("FRAME_ECHO_NET_SERVER_OPTIONS", "{} x"));
    assertTrue(trailing.startsWith("FRAME_ECHO_NET_SERVER_OPTIONS: not a JSON object: Unrecognized token 'x'"), trailing);
    assertTrue(trailing.matches("[^\\n]*at line 1, column \\d+"), trailing);
    assertEquals("FRAME_ECHO_NET_SERVER_OPTIONS: not a JSON object: Invalid JSON object: null",
      environmentError(null, Map.of("FRAME_ECHO_NET_SERVER_OPTIONS", "null")));
    String lineBreakInName = environmentError("{\"a\n\":1}", Map.of());
    assertTrue(lineBreakInName.startsWith("-conf: not a JSON object: Illegal unquoted character ((CTRL-CHAR, code 10))"), lineBreakInName);
    assertTrue(lineBreakInName.endsWith(" at line 1, column 4"), lineBreakInName);
  }

  // netServerOptions that Vert.x refuses: accepted by the reader, they failed the server's start instead.

  @Test
  void netServerOptionsThatVertxRefusesAreRefusedWithTheKeyNamed() {
    // Found by the fuzzer: {"netServerOptions":{"idleTimeoutUnit":""}} and negative sizes and timeouts passed
    // check-config, then failed the start with Vert.x's own message, naming no key of frame-echo's.
    assertEquals("netServerOptions.idleTimeoutUnit: Vert.x refuses \"\": No enum constant java.util.concurrent.TimeUnit.",
      error(new JsonObject().put("netServerOptions", new JsonObject().put("idleTimeoutUnit", ""))));
    assertEquals("netServerOptions.idleTimeout: Vert.x refuses -5: idleTimeout must be >= 0",
      error(new JsonObject().put("netServerOptions", new JsonObject().put("idleTimeout", -5))));
    assertEquals("netServerOptions.receiveBufferSize: Vert.x refuses 0: receiveBufferSize must be > 0",
      error(new JsonObject().put("netServerOptions", new JsonObject().put("receiveBufferSize", 0))));
    assertEquals("netServerOptions.trafficClass: Vert.x refuses 256: trafficClass tc must be 0 <= tc <= 255",
      error(new JsonObject().put("netServerOptions", new JsonObject().put("trafficClass", 256))));
    JsonObject good = new JsonObject().put("acceptBacklog", 5).put("receiveBufferSize", 65536).put("tcpUserTimeout", 1000);
    io.vertx.core.net.NetServerOptions read = new FrameEchoOptions(new JsonObject().put("netServerOptions", good)).getNetServerOptions();
    assertEquals(5, read.getAcceptBacklog());
    assertEquals(65536, read.getReceiveBufferSize());
    assertEquals(1000, read.getTcpUserTimeout());
  }
}
