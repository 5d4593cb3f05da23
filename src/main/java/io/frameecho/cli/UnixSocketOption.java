package io.frameecho.cli;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** {@code --unix-socket}, which {@code client} and {@code bench} share (a picocli mixin), checked in one place. */
final class UnixSocketOption {

  @Option(names = "--unix-socket", paramLabel = "PATH", description = "connect to this unix domain socket instead of --host and --port")
  String path;

  /**
   * The socket path, or null to connect to the host and port; refuses {@code --host} or {@code --port} given with
   * it (one of them would be ignored), and {@code --tls} (not supported over a unix socket by these commands).
   */
  String check(CommandSpec spec, boolean tls) {
    if (path == null) {
      return null;
    }
    for (String ignored : new String[] {"--host", "--port"}) {
      if (spec.commandLine().getParseResult() != null && spec.commandLine().getParseResult().hasMatchedOption(ignored)) {
        throw new ParameterException(spec.commandLine(), "--unix-socket and " + ignored + " exclude each other");
      }
    }
    if (tls) {
      throw new ParameterException(spec.commandLine(), "--unix-socket and --tls exclude each other");
    }
    if (path.isEmpty()) {
      throw new ParameterException(spec.commandLine(), "--unix-socket needs a path");
    }
    return path;
  }
}
