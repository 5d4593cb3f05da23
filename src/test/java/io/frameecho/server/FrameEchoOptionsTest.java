package io.frameecho.server;

import io.frameecho.server.impl.StartupChecks;

import io.vertx.core.net.NetServerOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FrameEchoOptionsTest {

  @Test
  void emptyConfigGivesTheDefaults() {
    FrameEchoOptions o = new FrameEchoOptions(new JsonObject());
    assertEquals("0.0.0.0", o.getHost());
    assertEquals(1234, o.getPort());
    assertEquals(32 * 1024 * 1024, o.getMaxFrameSize());
    assertEquals(64 * 1024, o.getWriteQueueMaxSize());
  }

  @Test
  void jsonRoundTrip() {
    FrameEchoOptions o = new FrameEchoOptions().setHost("127.0.0.1").setPort(0).setMaxFrameSize(10).setWriteQueueMaxSize(7);
    assertEquals(o.toJson(), new FrameEchoOptions(o.toJson()).toJson());
  }

  @Test
  void copiesKeepEveryValueAndShareNoSection() {
    FrameEchoOptions o = new FrameEchoOptions().setHost("127.0.0.1").setPort(-7).setMaxBufferedBytes(1L << 40)
      .setHandler(new HandlerOptions().setType("eventbus").setTimeoutMs(5_000_000_000L))
      .setTls(new TlsOptions().setCertPath("c.pem")).setMetrics(new MetricsOptions().setEnabled(true))
      .setNetServerOptions(new JsonObject().put("tcpKeepAlive", true));
    FrameEchoOptions copy = new FrameEchoOptions(o);
    assertEquals(o.toJson(), copy.toJson());
    assertEquals(5_000_000_000L, copy.getHandler().getTimeoutMs(), "a long beyond what JSON reading allows is copied");
    assertEquals(null, copy.getTls().getKeyPath(), "an unset path stays unset");
    o.getHandler().setMaxInFlight(1);
    o.getTls().setKeyPath("k.pem");
    o.getMetrics().setPort(1);
    o.getNetServerOptions().setReusePort(true);
    assertEquals(HandlerOptions.DEFAULT_MAX_IN_FLIGHT, copy.getHandler().getMaxInFlight());
    assertEquals(null, copy.getTls().getKeyPath());
    assertEquals(MetricsOptions.DEFAULT_PORT, copy.getMetrics().getPort());
    assertTrue(copy.getNetServerOptions().isTcpKeepAlive());
    assertEquals(false, copy.getNetServerOptions().isReusePort(), "the copy holds Vert.x options of its own");
    assertEquals(null, new FrameEchoOptions(new FrameEchoOptions()).getTls());
  }

  @Test
  void negativePortsShareARandomPort() {
    assertEquals(-1, new FrameEchoOptions(new JsonObject().put("port", -1)).getPort());
  }

  private static String error(JsonObject config) {
    return assertThrows(IllegalArgumentException.class, () -> new FrameEchoOptions(config)).getMessage();
  }

  @Test
  void badValuesNameTheKeyAndTheReason() {
    assertTrue(error(new JsonObject().put("port", 65536)).startsWith("port: 65536 is out of range"));
    assertTrue(error(new JsonObject().put("port", "1234")).startsWith("port: expected an integer but got the string \"1234\""));
    assertTrue(error(new JsonObject().put("port", 12.5)).startsWith("port: expected an integer"));
    assertTrue(error(new JsonObject().put("maxFrameSize", 0)).startsWith("maxFrameSize: 0 must be positive"));
    assertTrue(error(new JsonObject().put("maxFrameSize", -5)).startsWith("maxFrameSize: -5 must be positive"));
    assertTrue(error(new JsonObject().put("maxFrameSize", 4294967296L)).startsWith("maxFrameSize: 4294967296 is out of range"));
    assertTrue(error(new JsonObject().put("maxFrameSize", 2147483648L)).startsWith("maxFrameSize: 2147483648 is out of range"));
    assertTrue(error(new JsonObject().put("writeQueueMaxSize", 0)).startsWith("writeQueueMaxSize: 0 must be positive"));
    assertTrue(error(new JsonObject().put("host", 5)).startsWith("host: expected a string"));
    assertTrue(error(new JsonObject().put("host", "")).startsWith("host: must be a non-empty"));
    assertTrue(error(new JsonObject().putNull("port")).startsWith("port: expected an integer but got null"));
  }

  @Test
  void handlerSectionIsValidatedWithItsKeys() {
    assertTrue(error(new JsonObject().put("handler", new JsonObject().put("type", "grpc"))).startsWith("handler.type: \"grpc\" is not one of"));
    assertTrue(error(new JsonObject().put("handler", new JsonObject().put("adress", "x"))).startsWith("unknown configuration key 'handler.adress'"));
    assertTrue(error(new JsonObject().put("handler", new JsonObject().put("timeoutMs", 0))).startsWith("handler.timeoutMs: 0 must be positive"));
    assertTrue(error(new JsonObject().put("handler", new JsonObject().put("maxInFlight", -1))).startsWith("handler.maxInFlight: -1 must be positive"));
    assertTrue(error(new JsonObject().put("handler", new JsonObject().put("address", ""))).startsWith("handler.address: must be a non-empty"));
    assertTrue(error(new JsonObject().put("handler", "eventbus")).startsWith("handler: expected an object but got the string"));
    HandlerOptions h = new FrameEchoOptions(new JsonObject().put("handler", new JsonObject().put("type", "eventbus").put("maxInFlight", 4))).getHandler();
    assertEquals("eventbus", h.getType());
    assertEquals(4, h.getMaxInFlight());
    assertEquals(HandlerOptions.DEFAULT_ADDRESS, h.getAddress());
  }

  @Test
  void limitsAndTimeoutsAreValidated() {
    assertTrue(error(new JsonObject().put("maxConnections", -1)).startsWith("maxConnections: -1 cannot be negative (0 turns it off)"));
    assertTrue(error(new JsonObject().put("frameTimeoutMs", -5)).startsWith("frameTimeoutMs: -5 cannot be negative"));
    assertTrue(error(new JsonObject().put("idleTimeoutMs", "1s")).startsWith("idleTimeoutMs: expected an integer"));
    assertTrue(error(new JsonObject().put("maxBufferedBytes", -1)).startsWith("maxBufferedBytes: -1 cannot be negative (0 means automatic)"));
    assertEquals(6L << 30, new FrameEchoOptions(new JsonObject().put("maxBufferedBytes", 6L << 30)).effectiveMaxBufferedBytes());
    assertEquals(Runtime.getRuntime().maxMemory() / 4, new FrameEchoOptions().effectiveMaxBufferedBytes());
  }

  @Test
  void tlsNeedsBothPaths() {
    assertTrue(error(new JsonObject().put("tls", new JsonObject().put("certPath", "c.pem"))).startsWith("tls: both tls.certPath and tls.keyPath"));
    assertTrue(error(new JsonObject().put("tls", new JsonObject().put("password", "x"))).startsWith("unknown configuration key 'tls.password'"));
    assertEquals(null, new FrameEchoOptions(new JsonObject().putNull("tls")).getTls());
  }

  @Test
  void netServerOptionsPassThroughButNotHostPortOrUnknownNames() {
    JsonObject net = new JsonObject().put("tcpKeepAlive", true).put("acceptBacklog", 4096).put("reusePort", true);
    assertEquals(net, new FrameEchoOptions(new JsonObject().put("netServerOptions", net)).toJson().getJsonObject("netServerOptions"));
    assertTrue(error(new JsonObject().put("netServerOptions", new JsonObject().put("port", 1))).startsWith("netServerOptions.port: set it with the top-level key 'port'"));
    assertTrue(error(new JsonObject().put("netServerOptions", new JsonObject().put("tcpKeepAlives", true))).startsWith("netServerOptions.tcpKeepAlives: not a name Vert.x's NetServerOptions reads"));
  }

  /** What Vert.x's own toJson writes is read back, TLS in every form Vert.x has, with Vert.x's JSON names. */
  @Test
  void netServerOptionsAreVertxsOwnWithTheirJsonNames() {
    io.vertx.core.net.NetServerOptions typed = new io.vertx.core.net.NetServerOptions().setTcpKeepAlive(true).setSsl(true)
      .setKeyCertOptions(new io.vertx.core.net.PfxOptions().setPath("server.p12").setPassword("secret"))
      .setTrustOptions(new io.vertx.core.net.PemTrustOptions().addCertPath("ca.pem"))
      .setClientAuth(io.vertx.core.http.ClientAuth.REQUIRED)
      .addEnabledCipherSuite("TLS_AES_128_GCM_SHA256")
      .setEnabledSecureTransportProtocols(java.util.Set.of("TLSv1.3"))
      .setSslHandshakeTimeout(3);
    FrameEchoOptions read = new FrameEchoOptions(new JsonObject().put("netServerOptions", typed.toJson()));
    io.vertx.core.net.NetServerOptions net = read.getNetServerOptions();
    assertTrue(net.isSsl() && net.isTcpKeepAlive());
    assertEquals("server.p12", ((io.vertx.core.net.PfxOptions) net.getKeyCertOptions()).getPath());
    assertEquals(java.util.List.of("ca.pem"), ((io.vertx.core.net.PemTrustOptions) net.getTrustOptions()).getCertPaths());
    assertEquals(io.vertx.core.http.ClientAuth.REQUIRED, net.getClientAuth());
    assertEquals(java.util.Set.of("TLS_AES_128_GCM_SHA256"), net.getEnabledCipherSuites());
    assertEquals(java.util.Set.of("TLSv1.3"), net.getEnabledSecureTransportProtocols());
    assertEquals(3, net.getSslHandshakeTimeout());
    assertTrue(read.isTls());
    // And written back as the same JSON names.
    assertEquals(read.toJson(), new FrameEchoOptions(read.toJson()).toJson());
    JsonObject jks = new JsonObject().put("ssl", true).put("keyStoreOptions", new JsonObject().put("path", "s.jks").put("password", "p"));
    assertEquals("s.jks", ((io.vertx.core.net.JksOptions) new FrameEchoOptions(new JsonObject().put("netServerOptions", jks))
      .getNetServerOptions().getKeyCertOptions()).getPath());
    JsonObject pem = new JsonObject().put("ssl", true).put("pemKeyCertOptions", new JsonObject().put("certPath", "c.pem").put("keyPath", "k.pem"));
    assertTrue(new FrameEchoOptions(new JsonObject().put("netServerOptions", pem)).isTls());
  }

  /** Whatever Vert.x would ignore is refused with its key: a setter's name, a second form, a value of another type. */
  @Test
  void netServerOptionsThatVertxWouldIgnoreAreRefused() {
    assertEquals("netServerOptions.keyCertOptions: not a name Vert.x's NetServerOptions reads from JSON, so it would be ignored "
      + "(in JSON: pemKeyCertOptions, pfxKeyCertOptions or keyStoreOptions)",
      error(new JsonObject().put("netServerOptions", new JsonObject().put("ssl", true).put("keyCertOptions", new JsonObject()))));
    assertTrue(error(new JsonObject().put("netServerOptions", new JsonObject().put("ssl", true)
      .put("pemKeyCertOptions", new JsonObject().put("certPath", "c.pem").put("keyPath", "k.pem"))
      .put("pfxKeyCertOptions", new JsonObject().put("path", "s.p12"))))
      .startsWith("netServerOptions.pfxKeyCertOptions: not a name Vert.x's NetServerOptions reads from JSON"));
    assertEquals("netServerOptions.tcpKeepAlive: expected true or false but got the string \"yes\" (Vert.x would ignore it)",
      error(new JsonObject().put("netServerOptions", new JsonObject().put("tcpKeepAlive", "yes"))));
    assertEquals("netServerOptions.acceptBacklog: expected an integer but got 1.5 (Vert.x would ignore it)",
      error(new JsonObject().put("netServerOptions", new JsonObject().put("acceptBacklog", 1.5))));
    assertTrue(error(new JsonObject().put("netServerOptions", new JsonObject().put("ssl", true)
      .put("pfxKeyCertOptions", new JsonObject().put("file", "s.p12"))))
      .startsWith("netServerOptions.pfxKeyCertOptions.file: not a name Vert.x reads here"));
    assertTrue(error(new JsonObject().put("netServerOptions", new JsonObject().put("port", 1))).startsWith("netServerOptions.port: set it with the top-level key"));
  }

  /** TLS settings that would fail at start, or be ignored, fail here. */
  @Test
  void tlsSettingsMustMakeSense() {
    assertTrue(error(new JsonObject().put("netServerOptions", new JsonObject().put("ssl", true)))
      .startsWith("netServerOptions.ssl: TLS needs a key and certificate"));
    assertTrue(error(new JsonObject().put("netServerOptions", new JsonObject()
      .put("pfxKeyCertOptions", new JsonObject().put("path", "s.p12")))).startsWith("netServerOptions: key and certificate given without"));
    assertTrue(error(new JsonObject().put("netServerOptions", new JsonObject().put("clientAuth", "REQUIRED")))
      .startsWith("netServerOptions: trust or clientAuth given without TLS"));
    // The tls section's PEM files with Vert.x's client authentication beside them: mutual TLS.
    FrameEchoOptions mutual = new FrameEchoOptions(new JsonObject()
      .put("tls", new JsonObject().put("certPath", "c.pem").put("keyPath", "k.pem"))
      .put("netServerOptions", new JsonObject().put("clientAuth", "REQUIRED")
        .put("pemTrustOptions", new JsonObject().put("certPaths", new io.vertx.core.json.JsonArray().add("ca.pem")))));
    assertTrue(mutual.isTls());
  }

  /** The generated converter skips a value of another type; each is refused first, in a section too, with its key. */
  @Test
  void valuesTheConverterWouldSkipAreRefused() {
    assertEquals("metrics.enabled: expected true or false but got the string \"yes\"",
      error(new JsonObject().put("metrics", new JsonObject().put("enabled", "yes"))));
    assertEquals("handler.maxInFlight: expected an integer but got the string \"4\"",
      error(new JsonObject().put("handler", new JsonObject().put("maxInFlight", "4"))));
    assertEquals("handler.timeoutMs: expected an integer but got 1.5",
      error(new JsonObject().put("handler", new JsonObject().put("timeoutMs", 1.5))));
    assertEquals("tls.certPath: expected a string but got 7", error(new JsonObject().put("tls", new JsonObject().put("certPath", 7))));
    assertEquals("tls: expected an object but got true", error(new JsonObject().put("tls", true)));
    assertEquals("metrics: expected an object but got null", error(new JsonObject().putNull("metrics")));
    assertTrue(error(new JsonObject().put("metrics", new JsonObject().put("prot", 1)))
      .startsWith("unknown configuration key 'metrics.prot' (did you mean 'metrics.port'?); known keys: metrics.enabled,"));
    // handler.timeoutMs is read as the long it is held in.
    assertEquals(5_000_000_000L, new FrameEchoOptions(new JsonObject().put("handler", new JsonObject().put("timeoutMs", 5_000_000_000L)))
      .getHandler().getTimeoutMs());
  }

  /** One path of the tls section unset: refused when the options are checked, from JSON or from Java. */
  @Test
  void aTlsSectionWithOnePathIsRefusedWhenChecked() {
    assertEquals("c.pem", new TlsOptions(new JsonObject().put("certPath", "c.pem")).getCertPath(), "a section alone is read");
    assertEquals("tls: both tls.certPath and tls.keyPath are required",
      error(new JsonObject().put("tls", new JsonObject().put("certPath", "c.pem").putNull("keyPath"))));
    FrameEchoOptions java = new FrameEchoOptions().setTls(new TlsOptions().setKeyPath("k.pem"));
    assertEquals("tls: both tls.certPath and tls.keyPath are required",
      assertThrows(IllegalArgumentException.class, () -> StartupChecks.checkOptions(java)).getMessage());
  }

  @Test
  void transportIsOneOfFour() {
    assertEquals("io_uring", new FrameEchoOptions(new JsonObject().put("transport", "io_uring")).getTransport());
    assertTrue(error(new JsonObject().put("transport", "kqueue")).startsWith("transport: \"kqueue\" is not one of auto, nio, epoll, io_uring"));
  }

  @Test
  void unknownKeyIsRefused() {
    assertTrue(error(new JsonObject().put("maxFrameSise", 10)).startsWith("unknown configuration key 'maxFrameSise'"));
  }

  @Test
  void largestFrameSizeIsAccepted() {
    assertEquals(Integer.MAX_VALUE, new FrameEchoOptions(new JsonObject().put("maxFrameSize", 2147483647L)).getMaxFrameSize());
  }

  /** From the embedder's trial: a host in Vert.x's options was replaced by frame-echo's default, 0.0.0.0, without a word. */
  @Test
  void aHostOrPortInVertxsOwnOptionsIsRefusedNotReplaced() {
    FrameEchoOptions hosted = new FrameEchoOptions().setNetServerOptions(new NetServerOptions().setHost("127.0.0.1"));
    IllegalArgumentException host = assertThrows(IllegalArgumentException.class, () -> StartupChecks.checkOptions(hosted));
    assertTrue(host.getMessage().startsWith("netServerOptions.host: set it with FrameEchoOptions.setHost"), host.getMessage());
    FrameEchoOptions ported = new FrameEchoOptions().setNetServerOptions(new NetServerOptions().setPort(7000));
    assertThrows(IllegalArgumentException.class, () -> StartupChecks.checkOptions(ported));
    StartupChecks.checkOptions(new FrameEchoOptions().setHost("127.0.0.1").setNetServerOptions(new NetServerOptions().setTcpKeepAlive(true)));
  }

  /** A handler class that cannot answer is refused when the options are read (so check-config refuses it too). */
  @Test
  void aHandlerClassThatCannotAnswerIsRefusedWhenRead() {
    assertEquals("handler.type: no class io.frameecho.example.NoSuchHandler on the class path",
      error(new JsonObject().put("handler", new JsonObject().put("type", "io.frameecho.example.NoSuchHandler"))));
    assertEquals("handler.type: java.lang.String does not implement io.frameecho.server.RequestHandler",
      error(new JsonObject().put("handler", new JsonObject().put("type", "java.lang.String"))));
    assertEquals("io.frameecho.example.UpperCaseHandler", new FrameEchoOptions(new JsonObject()
      .put("handler", new JsonObject().put("type", "io.frameecho.example.UpperCaseHandler"))).getHandler().getType());
  }
}
