package io.frameecho.cli;

import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.PemTrustOptions;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.nio.file.Files;
import java.nio.file.Path;

/** The TLS options {@code client} and {@code bench} share (a picocli mixin), checked in one place. */
final class TlsClientOptions {

  @Option(names = "--tls", description = "connect with TLS")
  boolean tls;

  @Option(names = "--trust", paramLabel = "CERT.pem", description = "with --tls: trust this PEM certificate (or CA) instead of the JVM's defaults")
  String trust;

  @Option(names = "--no-verify-host", description = "with --tls: do not check that the certificate names the host (for a self-signed certificate)")
  boolean noVerifyHost;

  /** Refuses {@code --trust} or {@code --no-verify-host} without {@code --tls}, and a trusted file that is not there. */
  void check(CommandSpec spec) {
    if (!tls && (trust != null || noVerifyHost)) {
      throw new ParameterException(spec.commandLine(), (trust != null ? "--trust" : "--no-verify-host") + " needs --tls");
    }
    if (tls && trust != null && !Files.isRegularFile(Path.of(trust))) {
      throw new ParameterException(spec.commandLine(), "--trust " + trust + ": no such file");
    }
  }

  /** Vert.x client options for these settings. */
  NetClientOptions netClientOptions() {
    NetClientOptions options = new NetClientOptions().setTcpNoDelay(true);
    if (tls) {
      options.setSsl(true).setHostnameVerificationAlgorithm(noVerifyHost ? "" : "HTTPS");
      if (trust != null) {
        options.setTrustOptions(new PemTrustOptions().addCertPath(trust));
      }
    }
    return options;
  }
}
