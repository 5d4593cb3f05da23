package io.frameecho.server.impl.ops;

import io.vertx.core.Vertx;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Properties;

/** The frame-echo and Vert.x versions reported by the build-info meter and {@code --version}. */
public final class BuildInfo {

  private BuildInfo() {
  }

  /** frame-echo's version from {@code io/frameecho/version.properties}. */
  public static String frameEchoVersion() {
    try (InputStream in = BuildInfo.class.getResourceAsStream("/io/frameecho/version.properties")) {
      if (in != null) {
        Properties p = new Properties();
        p.load(in);
        String v = p.getProperty("version");
        if (v != null && !v.isBlank() && !v.startsWith("${")) {
          return v;
        }
      }
    } catch (IOException ignored) {
      // fall through: unknown
    }
    return "unknown (not built by Maven)";
  }

  /** The version of the Vert.x core on the class path. */
  public static String vertxVersion() {
    try (InputStream in = Vertx.class.getResourceAsStream("/META-INF/vertx/vertx-version.txt")) {
      if (in != null) {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
      }
    } catch (IOException ignored) {
      // fall through: unknown
    }
    return "unknown";
  }
}
