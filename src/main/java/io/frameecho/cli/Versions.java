package io.frameecho.cli;

import io.frameecho.server.impl.ops.BuildInfo;
import picocli.CommandLine.IVersionProvider;

/** What {@code --version} prints: frame-echo's version (from the build), Vert.x's and Java's. */
final class Versions {

  private Versions() {
  }

  static String frameEcho() {
    return BuildInfo.frameEchoVersion();
  }

  static String vertx() {
    return BuildInfo.vertxVersion();
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
