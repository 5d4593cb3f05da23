package io.frameecho.cli;

import io.frameecho.server.FrameEchoOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class EnvironmentConfigTest {

  @TempDir
  Path dir;

  @Test
  void variableNamesFollowTheKeys() {
    assertEquals("FRAME_ECHO_PORT", EnvironmentConfig.variableName("port"));
    assertEquals("FRAME_ECHO_MAX_FRAME_SIZE", EnvironmentConfig.variableName("maxFrameSize"));
    assertEquals("FRAME_ECHO_HANDLER_MAX_IN_FLIGHT", EnvironmentConfig.variableName("handler.maxInFlight"));
    assertTrue(EnvironmentConfig.knownVariables().containsAll(java.util.List.of("FRAME_ECHO_TLS_CERT_PATH",
      "FRAME_ECHO_METRICS_ENABLED", "FRAME_ECHO_NET_SERVER_OPTIONS", "FRAME_ECHO_WRITE_STALL_TIMEOUT_MS")));
  }

  @Test
  void theVariablesAreExactlyTheKeysOfTheConfiguration() {
    assertEquals(new java.util.TreeSet<>(java.util.List.of("FRAME_ECHO_BUDGET_GRACE_MS", "FRAME_ECHO_DRAIN_DELAY_MS", "FRAME_ECHO_FRAME_TIMEOUT_MS", "FRAME_ECHO_FRAMING",
      "FRAME_ECHO_HANDLER_ADDRESS", "FRAME_ECHO_HANDLER_HELD_AFTER_TIMEOUT_MS", "FRAME_ECHO_HANDLER_MAX_IN_FLIGHT",
      "FRAME_ECHO_HANDLER_NODE_LEFT_GRACE_MS",
      "FRAME_ECHO_HANDLER_RESEND_AFTER_MS", "FRAME_ECHO_HANDLER_TIMEOUT_MS", "FRAME_ECHO_HANDLER_TYPE", "FRAME_ECHO_HANDOVER_SOCKET",
      "FRAME_ECHO_HOST", "FRAME_ECHO_IDLE_GIVE_WAY_MS", "FRAME_ECHO_IDLE_TIMEOUT_MS", "FRAME_ECHO_KEEP_ALIVE_SECONDS", "FRAME_ECHO_LINGER_TIMEOUT_MS", "FRAME_ECHO_MAX_BUFFERED_BYTES", "FRAME_ECHO_MAX_CONNECTIONS",
      "FRAME_ECHO_MAX_CONNECTIONS_PER_IP", "FRAME_ECHO_MAX_FRAME_SIZE", "FRAME_ECHO_METRICS_ENABLED", "FRAME_ECHO_METRICS_ENDPOINT",
      "FRAME_ECHO_METRICS_HOST", "FRAME_ECHO_METRICS_PORT", "FRAME_ECHO_METRICS_REGISTRY_NAME", "FRAME_ECHO_METRICS_SERVER", "FRAME_ECHO_NET_SERVER_OPTIONS", "FRAME_ECHO_PORT", "FRAME_ECHO_PROXY_TRUSTED_PEERS", "FRAME_ECHO_SHUTDOWN_TIMEOUT_MS",
      "FRAME_ECHO_TLS_CERT_PATH", "FRAME_ECHO_TLS_KEY_PATH", "FRAME_ECHO_TRANSPORT", "FRAME_ECHO_UNIX_SOCKET", "FRAME_ECHO_WRITE_QUEUE_MAX_SIZE",
      "FRAME_ECHO_WRITE_STALL_TIMEOUT_MS")), EnvironmentConfig.knownVariables());
  }

  @Test
  void everyKeyOfTheConfigurationHasAVariable() {
    JsonObject all = EnvironmentConfig.fromEnvironment(Map.ofEntries(
      Map.entry("FRAME_ECHO_HOST", "127.0.0.1"), Map.entry("FRAME_ECHO_PORT", "5555"),
      Map.entry("FRAME_ECHO_MAX_FRAME_SIZE", "1024"), Map.entry("FRAME_ECHO_HANDLER_TYPE", "eventbus"),
      Map.entry("FRAME_ECHO_METRICS_ENABLED", "true"), Map.entry("FRAME_ECHO_TLS_CERT_PATH", "c.pem"),
      Map.entry("FRAME_ECHO_TLS_KEY_PATH", "k.pem"), Map.entry("FRAME_ECHO_NET_SERVER_OPTIONS", "{\"tcpKeepAlive\":true}"),
      Map.entry("FRAME_ECHO_LOG_LEVEL", "DEBUG"), Map.entry("PATH", "/bin")));
    FrameEchoOptions options = new FrameEchoOptions(all);
    assertEquals("127.0.0.1", options.getHost());
    assertEquals(5555, options.getPort());
    assertEquals(1024, options.getMaxFrameSize());
    assertEquals("eventbus", options.getHandler().getType());
    assertTrue(options.getMetrics().isEnabled());
    assertEquals("c.pem", options.getTls().getCertPath());
    assertTrue(options.getNetServerOptions().isTcpKeepAlive());
  }

  @Test
  void badVariablesNameThemselves() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> EnvironmentConfig.fromEnvironment(Map.of("FRAME_ECHO_PORT", "http")))
      .getMessage().startsWith("FRAME_ECHO_PORT: \"http\" is not an integer"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> EnvironmentConfig.fromEnvironment(Map.of("FRAME_ECHO_METRICS_ENABLED", "yes")))
      .getMessage().startsWith("FRAME_ECHO_METRICS_ENABLED: \"yes\" is not true or false"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> EnvironmentConfig.fromEnvironment(Map.of("FRAME_ECHO_MAX_FRAMESIZE", "1")))
      .getMessage().startsWith("FRAME_ECHO_MAX_FRAMESIZE: no such frame-echo setting"));
  }

  @Test
  void fileThenEnvironmentThenInline() throws Exception {
    Path file = dir.resolve("config.json");
    Files.writeString(file, "{\"port\":1111,\"maxFrameSize\":100,\"handler\":{\"type\":\"echo\",\"maxInFlight\":5}}");
    Map<String, String> env = Map.of("FRAME_ECHO_PORT", "2222", "FRAME_ECHO_HANDLER_MAX_IN_FLIGHT", "7");

    JsonObject fromFile = EnvironmentConfig.effective(file.toString(), env);
    assertEquals(2222, fromFile.getLong("port"), "environment over file");
    assertEquals(100, fromFile.getLong("maxFrameSize"), "file kept where the environment is silent");
    assertEquals(7, fromFile.getJsonObject("handler").getLong("maxInFlight"));
    assertEquals("echo", fromFile.getJsonObject("handler").getString("type"), "nested keys merge, not replace");

    JsonObject inline = EnvironmentConfig.effective("{\"port\":3333}", env);
    assertEquals(3333, inline.getLong("port"), "inline over environment");
    assertEquals(7, inline.getJsonObject("handler").getLong("maxInFlight"));

    assertEquals(2222, EnvironmentConfig.effective(null, env).getLong("port"), "environment alone");
  }

  @Test
  void confArgumentIsFoundInTheLauncherArguments() {
    assertEquals("c.json", Main.confArgument(new String[] {"-instances", "2", "-conf", "c.json"}));
    assertEquals("{}", Main.confArgument(new String[] {"--conf={}"}));
    assertEquals(null, Main.confArgument(new String[] {"-cluster"}));
  }

  @Test
  void aConfFileThatIsNotThereIsSaidSo() {
    assertEquals("-conf conf/nonexistent.json: the file does not exist (give a file or an inline JSON object)",
      assertThrows(IllegalArgumentException.class, () -> EnvironmentConfig.effective("conf/nonexistent.json", Map.of())).getMessage());
    assertTrue(assertThrows(IllegalArgumentException.class, () -> EnvironmentConfig.effective(dir.toString(), Map.of()))
      .getMessage().endsWith("not a regular file"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> EnvironmentConfig.effective("{\"port\":", Map.of()))
      .getMessage().startsWith("-conf: not a JSON object"));
  }

  @Test
  void debugAndLoggingVariablesAreNotSettings() {
    assertEquals(new JsonObject(), EnvironmentConfig.fromEnvironment(Map.of("FRAME_ECHO_DEBUG", "1", "FRAME_ECHO_LOG_FORMAT", "json")));
  }

  @Test
  void loggingVariablesAreCheckedIgnoringCase() {
    assertEquals(Map.of("FRAME_ECHO_LOG_LEVEL", "DEBUG", "FRAME_ECHO_LOG_FORMAT", "json"),
      LogSettings.check(Map.of("FRAME_ECHO_LOG_LEVEL", "debug", "FRAME_ECHO_LOG_FORMAT", "JSON")));
    assertEquals(Map.of(), LogSettings.check(Map.of()));
    assertEquals("FRAME_ECHO_LOG_LEVEL: \"VERBOSE\" is not a level; use one of TRACE, DEBUG, INFO, WARN, ERROR, OFF (default INFO)",
      assertThrows(IllegalArgumentException.class, () -> LogSettings.check(Map.of("FRAME_ECHO_LOG_LEVEL", "VERBOSE"))).getMessage());
    assertEquals("FRAME_ECHO_LOG_FORMAT: \"logfmt\" is not a log format; use one of text, json (default text)",
      assertThrows(IllegalArgumentException.class, () -> LogSettings.check(Map.of("FRAME_ECHO_LOG_FORMAT", "logfmt"))).getMessage());
  }

  @Test
  void unknownSubcommandsAndVerticlesAreNamed() {
    assertEquals("unknown subcommand 'clinet' (did you mean 'client'?); subcommands: client, bench, check-config; run --help for usage",
      Main.unknownVerticle("clinet"));
    assertTrue(Main.unknownVerticle("frobnicate").startsWith("unknown subcommand 'frobnicate'; subcommands:"));
    assertTrue(Main.unknownVerticle("io.frameecho.Nope").startsWith("no verticle class io.frameecho.Nope"));
    assertEquals(null, Main.unknownVerticle("io.frameecho.example.UpperCaseConsumer"));
  }

  @Test
  void addressesSayWhenTheyMeanEveryInterface() {
    assertEquals("0.0.0.0:1234 (all interfaces)", Main.where("0.0.0.0", 1234));
    assertEquals("[::]:1234 (all interfaces)", Main.where("::", 1234));
    assertEquals("127.0.0.1:9464", Main.where("127.0.0.1", 9464));
  }

  @Test
  void launcherArgumentsTheLauncherWouldRefuseAreOneLine() {
    assertEquals(null, Main.launcherArgumentProblem(new String[] {"-conf", "c.json", "-instances", "2", "-cluster",
      "-options={\"haEnabled\":true}", "--deployment-options", "{}", "-Conf", "x"}));
    assertEquals(null, Main.launcherArgumentProblem(new String[] {"io.frameecho.example.UpperCaseConsumer", "-cluster"}));
    assertTrue(Main.launcherArgumentProblem(new String[] {"-conff", "x.json"}).startsWith("unknown option '-conff' (did you mean '-conf'?)"));
    assertEquals("-conf needs a value; run --help for usage", Main.launcherArgumentProblem(new String[] {"-conf"}));
    assertTrue(Main.launcherArgumentProblem(new String[] {"-conf", "a.json", "b.json"}).startsWith("unexpected argument 'b.json'"));
  }
}
