package io.frameecho.cli;

import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.MetricsOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The configuration the runnable jar deploys: a file it reads means what it always has. Its one default that is not
 * the library's: with metrics on, the jar opens the metrics endpoint unless the configuration says
 * {@code "endpoint": false}, while an embedded server opens none unless asked.
 */
class JarConfigTest {

  private static MetricsOptions jarMetrics(Map<String, String> env, String... args) {
    return new FrameEchoOptions(Main.checkedConfig(args, env)).getMetrics();
  }

  @Test
  void theShippedConfigFileListsEveryKeyWithTheJarsDefault() throws Exception {
    JsonObject shipped = new JsonObject(Files.readString(Path.of("conf", "config.json")));
    assertEquals(TestAccess.jarDefaults(), shipped);
  }

  @Test
  void withMetricsOnTheJarOpensTheEndpointUnlessTheConfigurationSaysNo() {
    assertFalse(new MetricsOptions().isEndpoint(), "the library's default: no HTTP port of ours");
    assertTrue(jarMetrics(Map.of(), "-conf", "{\"metrics\":{\"enabled\":true}}").isEndpoint(), "-conf JSON");
    assertTrue(jarMetrics(Map.of("FRAME_ECHO_METRICS_ENABLED", "true")).isEndpoint(), "the environment alone");
    assertTrue(jarMetrics(Map.of(), "-conf", "conf/hardened.json").isEndpoint(), "conf/hardened.json, which does not say");
    assertFalse(jarMetrics(Map.of(), "-conf", "{\"metrics\":{\"enabled\":true,\"endpoint\":false}}").isEndpoint(),
      "\"endpoint\": false");
    assertFalse(jarMetrics(Map.of("FRAME_ECHO_METRICS_ENDPOINT", "false"), "-conf", "{\"metrics\":{\"enabled\":true}}").isEndpoint(),
      "FRAME_ECHO_METRICS_ENDPOINT=false");
    assertEquals(new JsonObject().put("port", 0), Main.checkedConfig(new String[] {"-conf", "{\"port\":0}"}, Map.of()),
      "metrics off (no section): nothing is added");
  }
}
