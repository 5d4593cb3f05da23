package io.frameecho.server.impl;

import io.frameecho.server.FrameEchoOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The deployment recipe holds together: {@code conf/hardened.json} is a valid configuration that hardens what the
 * defaults leave open, and {@code conf/frame-echo.service} gives it the exit statuses, the stop time and the
 * descriptors it needs.
 */
class DeploymentRecipeTest {

  private static FrameEchoOptions hardened() throws Exception {
    return new FrameEchoOptions(new JsonObject(Files.readString(Path.of("conf", "hardened.json"))));
  }

  /** The unit's {@code Key=value} lines (the last of a key wins, as in systemd). */
  private static Map<String, String> unit() throws Exception {
    Map<String, String> keys = new HashMap<>();
    for (String line : Files.readAllLines(Path.of("conf", "frame-echo.service"))) {
      int eq = line.indexOf('=');
      if (!line.startsWith("#") && !line.startsWith("[") && eq > 0) {
        keys.put(line.substring(0, eq), line.substring(eq + 1));
      }
    }
    return keys;
  }

  @Test
  void theHardenedConfigurationParsesAndClosesWhatTheDefaultsLeaveOpen() throws Exception {
    FrameEchoOptions options = hardened();
    FrameEchoOptions defaults = new FrameEchoOptions();
    assertTrue(options.getIdleTimeoutMs() > 0, "idle connections time out");
    assertTrue(options.getMaxConnectionsPerIp() > 0, "one address cannot take every slot");
    assertTrue(options.getMaxConnections() > 0);
    assertTrue(options.getMaxBufferedBytes() > 0, "an explicit budget, not a share of whatever heap");
    assertTrue(options.getMaxFrameSize() < defaults.getMaxFrameSize());
    assertTrue(options.getDrainDelayMs() > 0, "the load balancer is given time to see readiness turn");
    assertTrue(options.getMetrics().isEnabled());
    assertEquals("127.0.0.1", options.getMetrics().getHost(), "health and metrics stay on loopback");
  }

  @Test
  void theUnitGivesTheServerWhatItNeeds() throws Exception {
    FrameEchoOptions options = hardened();
    Map<String, String> unit = unit();
    assertTrue(List.of(unit.get("SuccessExitStatus").split(" ")).contains("143"), "a graceful stop is a success");
    assertTrue(List.of(unit.get("RestartPreventExitStatus").split(" ")).containsAll(List.of("1", "2")),
      "no restart loop on a bad configuration");
    String stop = unit.get("TimeoutStopSec");
    assertTrue(stop.endsWith("s"), stop);
    long stopMs = Long.parseLong(stop.substring(0, stop.length() - 1)) * 1000;
    long graceful = options.getDrainDelayMs() + options.getShutdownTimeoutMs() + options.getLingerTimeoutMs();
    assertTrue(stopMs >= graceful, "TimeoutStopSec " + stop + " is shorter than the graceful stop, " + graceful + " ms");
    long descriptors = Long.parseLong(unit.get("LimitNOFILE"));
    assertTrue(descriptors >= DescriptorLimit.needed(options.getMaxConnections()), "LimitNOFILE " + descriptors);
    assertTrue(unit.get("ExecStart").contains("-conf /etc/frame-echo/hardened.json"), unit.get("ExecStart"));
  }
}
