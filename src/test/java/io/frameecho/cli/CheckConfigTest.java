package io.frameecho.cli;

import io.frameecho.testkit.TestKeyStores;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code check-config} finds what would fail the start, TLS key material included, binding nothing. */
class CheckConfigTest {

  private static TestKeyStores stores;

  @BeforeAll
  static void makeStores() throws Exception {
    stores = TestKeyStores.create();
  }

  @AfterAll
  static void deleteStores() throws Exception {
    stores.delete();
  }

  private record Result(int status, String out, String err) {
  }

  private static Result checkConfig(Map<String, String> env, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    String[] all = new String[args.length + 1];
    all[0] = "check-config";
    System.arraycopy(args, 0, all, 1, args.length);
    Integer status = Main.run(all, env, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Result(status == null ? 0 : status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private static JsonObject pfxServer(String password) {
    return new JsonObject().put("ssl", true).put("pfxKeyCertOptions",
      new JsonObject().put("path", stores.serverStore().toString()).put("password", password));
  }

  private static void assertInvalid(Result result, String expected) {
    assertEquals(1, result.status(), result.out() + result.err());
    assertTrue(result.err().startsWith("frame-echo: invalid configuration: " + expected), result.err());
    assertEquals(1, result.err().lines().count(), result.err());
  }

  @Test
  void aPkcs12ServerWithClientAuthIsValid() {
    JsonObject net = pfxServer(TestKeyStores.PASSWORD).put("clientAuth", "REQUIRED")
      .put("pfxTrustOptions", new JsonObject().put("path", stores.serverTrust().toString()).put("password", TestKeyStores.PASSWORD));
    Result result = checkConfig(Map.of(), "-conf", new JsonObject().put("netServerOptions", net).encode());
    assertEquals(0, result.status(), result.err());
    assertTrue(result.out().contains("with TLS"), result.out());
  }

  @Test
  void whatWouldFailTheStartIsFound() throws Exception {
    assertInvalid(checkConfig(Map.of(), "-conf", "{\"netServerOptions\":{\"ssl\":true}}"), "netServerOptions.ssl: TLS needs a key and certificate");
    assertInvalid(checkConfig(Map.of(), "-conf", new JsonObject().put("netServerOptions", new JsonObject().put("ssl", true)
      .put("pfxKeyCertOptions", new JsonObject().put("path", "no-such.p12"))).encode()), "netServerOptions: cannot read the TLS file no-such.p12");
    assertInvalid(checkConfig(Map.of(), "-conf", new JsonObject().put("netServerOptions", pfxServer("wrong")).encode()),
      "netServerOptions: the TLS key and certificate do not load");
    Path notAKey = Files.createTempFile("frame-echo", ".pem");
    try {
      Files.writeString(notAKey, "not a key\n");
      assertInvalid(checkConfig(Map.of(), "-conf", new JsonObject().put("tls", new JsonObject().put("certPath", notAKey.toString())
        .put("keyPath", notAKey.toString())).encode()), "tls: the TLS key and certificate do not load from key file " + notAKey
        + ", certificate file " + notAKey + ": ");
    } finally {
      Files.delete(notAKey);
    }
    assertInvalid(checkConfig(Map.of("FRAME_ECHO_NET_SERVER_OPTIONS", "{\"tcpKeepAlive\":\"yes\"}")),
      "netServerOptions.tcpKeepAlive: expected true or false but got the string \"yes\"");
  }

  private static Result server(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    Integer status = Main.run(args, Map.of(), new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Result(status == null ? 0 : status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /**
   * From the first-hour trial: check-config called {@code -config x}, {@code --bogus} and a bare {@code -conf} valid, and the
   * server refused all three. Each is refused by both, in the same line with the same status; the server stops before it starts.
   */
  @Test
  void anOptionTheServerRefusesCheckConfigRefusesInTheSameWords() {
    for (String[] args : new String[][] {{"-config", "cfg/x.json"}, {"--bogus"}, {"-conf"}}) {
      Result check = checkConfig(Map.of(), args);
      Result server = server(args);
      assertEquals(Main.USAGE, check.status(), check.out() + check.err());
      assertEquals(Main.USAGE, server.status(), server.out() + server.err());
      assertEquals(server.err(), check.err());
      assertEquals("", check.out());
    }
    assertTrue(checkConfig(Map.of(), "-config", "cfg/x.json").err().startsWith("frame-echo: unknown option '-config' (did you mean '-conf'?)"));
    assertEquals("frame-echo: -conf needs a value; run --help for usage", checkConfig(Map.of(), "-conf").err().strip());
  }

  @Test
  void aMistypedKeyGetsTheNearestKnownOne() {
    assertInvalid(checkConfig(Map.of(), "-conf", "{\"maxFrameSze\":10}"),
      "unknown configuration key 'maxFrameSze' (did you mean 'maxFrameSize'?); known keys: host, port,");
    assertInvalid(checkConfig(Map.of(), "-conf", "{\"metrics\":{\"enabeld\":true}}"),
      "unknown configuration key 'metrics.enabeld' (did you mean 'metrics.enabled'?); known keys: metrics.enabled,");
    // Nothing near: no guess.
    assertInvalid(checkConfig(Map.of(), "-conf", "{\"colour\":\"blue\"}"), "unknown configuration key 'colour'; known keys: host,");
  }

  @Test
  void aConfigurationFileThatIsNotThereIsNamed() {
    assertInvalid(checkConfig(Map.of(), "-conf", "no-such-dir/frame-echo.json"), "-conf no-such-dir/frame-echo.json: the file does not exist");
  }

  /** From the newcomer's trial: check-config named the default TCP port for a configuration that listens on a unix socket. */
  @Test
  void aUnixSocketIsWhatItSaysTheServerWouldListenOn() {
    Result result = checkConfig(Map.of(), "-conf", new JsonObject().put("unixSocket", "/tmp/frame-echo-check.sock").encode());
    assertEquals(0, result.status(), result.out() + result.err());
    assertTrue(result.out().startsWith("frame-echo: configuration is valid: frame unix socket /tmp/frame-echo-check.sock,"),
      result.out());
  }

  /** Keep-alive is on by default (Redis's 300 s); check-config says how it is set, and refuses two settings of it. */
  @Test
  void itSaysHowKeepAliveIsSet() {
    Result byDefault = checkConfig(Map.of());
    assertEquals(0, byDefault.status(), byDefault.err());
    assertTrue(byDefault.out().contains(", keep-alive 300s,"), byDefault.out());
    Result off = checkConfig(Map.of("FRAME_ECHO_KEEP_ALIVE_SECONDS", "0"));
    assertTrue(off.out().contains(", keep-alive off,"), off.out());
    Result vertx = checkConfig(Map.of(), "-conf", "{\"netServerOptions\":{\"tcpKeepAlive\":true,\"tcpKeepAliveIdleSeconds\":60}}");
    assertTrue(vertx.out().contains(", keep-alive netServerOptions (idle 60, interval the kernel's, count the kernel's),"), vertx.out());
    assertInvalid(checkConfig(Map.of(), "-conf", "{\"keepAliveSeconds\":60,\"netServerOptions\":{\"tcpKeepAlive\":true}}"),
      "keepAliveSeconds: netServerOptions.tcpKeepAlive sets keep-alive itself");
  }

  /** check-config says from which peers a PROXY protocol header is read, and refuses what would break a promise. */
  @Test
  void itSaysHowThePROXYProtocolIsReadAndRefusesOptionsThatBreakPromises() {
    Result proxied = checkConfig(Map.of(), "-conf",
      "{\"netServerOptions\":{\"useProxyProtocol\":true},\"proxyTrustedPeers\":\"10.0.0.0/8\"}");
    assertEquals(0, proxied.status(), proxied.err());
    assertTrue(proxied.out().contains(", PROXY protocol v1/v2 from 10.0.0.0/8,"), proxied.out());
    // Without checkIntervalForStatsTimeUnit this passed check-config, then failed the start with a 66-line trace.
    assertInvalid(checkConfig(Map.of(), "-conf", "{\"netServerOptions\":{\"trafficShapingOptions\":{\"inboundGlobalBandwidth\":8388608}}}"),
      "netServerOptions.trafficShapingOptions: refused: ");
    assertInvalid(checkConfig(Map.of(), "-conf", "{\"netServerOptions\":{\"registerWriteHandler\":true}}"),
      "netServerOptions.registerWriteHandler: refused: ");
  }

  /** The jar's metrics endpoint is on with metrics unless the configuration says no; check-config says which. */
  @Test
  void itSaysWhetherTheMetricsEndpointOpens() {
    Result on = checkConfig(Map.of("FRAME_ECHO_METRICS_ENABLED", "true"));
    assertEquals(0, on.status(), on.err());
    assertTrue(on.out().contains(", metrics on http://127.0.0.1:9464/metrics (nothing was bound)"), on.out());
    Result off = checkConfig(Map.of(), "-conf", "{\"metrics\":{\"enabled\":true,\"endpoint\":false}}");
    assertEquals(0, off.status(), off.err());
    assertTrue(off.out().contains(", metrics on, without an endpoint (nothing was bound)"), off.out());
  }

  /** From an embedder's trial: check-config called these valid, and the server then hung or failed every client. */
  @Test
  void cipherSuitesAndProtocolsTheEngineDoesNotSupportAreFound() {
    assertInvalid(checkConfig(Map.of(), "-conf", new JsonObject().put("netServerOptions", pfxServer(TestKeyStores.PASSWORD)
        .put("enabledCipherSuites", new io.vertx.core.json.JsonArray().add("TLS_NO_SUCH_SUITE"))).encode()),
      "netServerOptions.enabledCipherSuites: not supported by the JDK's TLS engine: TLS_NO_SUCH_SUITE");
    assertInvalid(checkConfig(Map.of(), "-conf", new JsonObject().put("netServerOptions", pfxServer(TestKeyStores.PASSWORD)
        .put("enabledSecureTransportProtocols", new io.vertx.core.json.JsonArray().add("TLSv1.9"))).encode()),
      "netServerOptions.enabledSecureTransportProtocols: not supported by the JDK's TLS engine: TLSv1.9");
    assertInvalid(checkConfig(Map.of(), "-conf", new JsonObject().put("netServerOptions", pfxServer(TestKeyStores.PASSWORD)
        .put("enabledSecureTransportProtocols", new io.vertx.core.json.JsonArray().add("TLSv1").add("TLSv1.1"))).encode()),
      "netServerOptions.enabledSecureTransportProtocols: no protocol a handshake could use: TLSv1, TLSv1.1 are disabled");
    // The build has no netty-tcnative: the engine the options select is not there at all.
    assertInvalid(checkConfig(Map.of(), "-conf", new JsonObject().put("netServerOptions", pfxServer(TestKeyStores.PASSWORD)
        .put("openSslEngineOptions", new JsonObject())).encode()),
      "netServerOptions.openSslEngineOptions: OpenSSL is not available");
  }
}
