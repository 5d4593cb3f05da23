package io.frameecho.cli;

import io.vertx.core.Vertx;
import picocli.CommandLine.IVersionProvider;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Properties;

/** What {@code --version} prints: frame-echo's version (from the build), Vert.x's and Java's. */
final class Versions {

  private Versions() {
  }

  /** frame-echo's version, as the build wrote it into {@code io/frameecho/version.properties}. */
  static String frameEcho() {
    try (InputStream in = Versions.class.getResourceAsStream("/io/frameecho/version.properties")) {
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

  static String vertx() {
    try (InputStream in = Vertx.class.getResourceAsStream("/META-INF/vertx/vertx-version.txt")) {
      if (in != null) {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
      }
    } catch (IOException ignored) {
      // fall through: unknown
    }
    return "unknown";
  }

  static String java() {
    return System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + " "
      + System.getProperty("java.vm.version") + ", " + System.getProperty("java.vendor") + ")";
  }

  static String[] lines() {
    return new String[] {"frame-echo " + frameEcho(), "Vert.x " + vertx(), "Java " + java()};
  }

  /** For picocli's {@code -V} / {@code --version} on the subcommands. */
  static final class Provider implements IVersionProvider {
    @Override
    public String[] getVersion() {
      return lines();
    }
  }
}
