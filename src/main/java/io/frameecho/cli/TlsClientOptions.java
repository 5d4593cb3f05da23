package io.frameecho.cli;

import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.PemKeyCertOptions;
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

  @Option(names = "--cert", paramLabel = "CERT.pem", description = "with --tls and --key: present this PEM certificate to a server that asks for one (clientAuth, mutual TLS)")
  String cert;

  @Option(names = "--key", paramLabel = "KEY.pem", description = "with --tls and --cert: the certificate's private key, PEM (PKCS#8, BEGIN PRIVATE KEY)")
  String key;

  @Option(names = "--no-verify-host", description = "with --tls: do not check that the certificate names the host (for a self-signed certificate)")
  boolean noVerifyHost;

  /**
   * Refuses {@code --trust}, {@code --cert}, {@code --key} or {@code --no-verify-host} without {@code --tls}, a certificate
   * without its key (or a key without its certificate), and a named file that is not there.
   */
  void check(CommandSpec spec) {
    if (!tls && (trust != null || cert != null || key != null || noVerifyHost)) {
      throw new ParameterException(spec.commandLine(), (trust != null ? "--trust" : cert != null ? "--cert" : key != null ? "--key"
        : "--no-verify-host") + " needs --tls");
    }
    if ((cert == null) != (key == null)) {
      throw new ParameterException(spec.commandLine(), cert != null ? "--cert needs --key (its private key)" : "--key needs --cert (its certificate)");
    }
    requireFile(spec, "--trust", trust);
    requireFile(spec, "--cert", cert);
    requireFile(spec, "--key", key);
  }

  private static void requireFile(CommandSpec spec, String option, String file) {
    if (file != null && !Files.isRegularFile(Path.of(file))) {
      throw new ParameterException(spec.commandLine(), option + " " + file + ": no such file");
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
      if (cert != null) {
        options.setKeyCertOptions(new PemKeyCertOptions().setCertPath(cert).setKeyPath(key));
      }
    }
    return options;
  }
}
