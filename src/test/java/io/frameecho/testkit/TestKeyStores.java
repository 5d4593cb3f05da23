package io.frameecho.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Key and trust stores made at test time with the JDK's {@code keytool} (nothing secret is in the repository): a
 * server's and a client's self-signed EC key pair, each in a PKCS12 store, the other side's certificate in a PKCS12
 * trust store, and the server's pair again as JKS. Every store's password is {@link #PASSWORD}.
 */
public final class TestKeyStores {

  public static final String PASSWORD = "test-only";

  private final Path dir;

  private TestKeyStores(Path dir) {
    this.dir = dir;
  }

  /** Makes every store in a new temporary directory; {@link #delete} removes it. */
  public static TestKeyStores create() throws IOException, InterruptedException {
    TestKeyStores stores = new TestKeyStores(Files.createTempDirectory("frame-echo-stores"));
    stores.keyPair("server", "PKCS12", stores.serverStore());
    stores.keyPair("client", "PKCS12", stores.clientStore());
    stores.keyPair("server", "JKS", stores.serverJks());
    stores.exportAndTrust("server", stores.serverStore(), stores.clientTrust());
    stores.exportAndTrust("client", stores.clientStore(), stores.serverTrust());
    return stores;
  }

  /** A second server key pair, another certificate for the same name: what a rotation installs. */
  public Path newServerStore(String name) throws IOException, InterruptedException {
    Path store = dir.resolve(name + ".p12");
    keyPair("server", "PKCS12", store);
    return store;
  }

  public Path serverStore() {
    return dir.resolve("server.p12");
  }

  public Path serverJks() {
    return dir.resolve("server.jks");
  }

  public Path clientStore() {
    return dir.resolve("client.p12");
  }

  /** The server's trust store: the client's certificate. */
  public Path serverTrust() {
    return dir.resolve("server-trust.p12");
  }

  /** The client's trust store: the server's certificate. */
  public Path clientTrust() {
    return dir.resolve("client-trust.p12");
  }

  private void keyPair(String alias, String type, Path store) throws IOException, InterruptedException {
    Files.deleteIfExists(store);
    keytool("-genkeypair", "-alias", alias, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
      "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-validity", "2", "-storetype", type, "-keystore", store.toString(),
      "-storepass", PASSWORD, "-keypass", PASSWORD);
  }

  private void exportAndTrust(String alias, Path store, Path trust) throws IOException, InterruptedException {
    Path certificate = dir.resolve(alias + ".crt");
    keytool("-exportcert", "-alias", alias, "-keystore", store.toString(), "-storepass", PASSWORD, "-rfc", "-file",
      certificate.toString());
    keytool("-importcert", "-noprompt", "-alias", alias, "-file", certificate.toString(), "-storetype", "PKCS12",
      "-keystore", trust.toString(), "-storepass", PASSWORD);
  }

  private static void keytool(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
      process.destroyForcibly();
      throw new IOException("keytool " + String.join(" ", args) + " failed: " + output);
    }
  }

  public void delete() throws IOException {
    try (var files = Files.list(dir)) {
      for (Path file : files.toList()) {
        Files.delete(file);
      }
    }
    Files.delete(dir);
  }
}
