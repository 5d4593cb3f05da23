package io.frameecho.server.impl;

import io.frameecho.server.FrameEchoOptions;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.KeyCertOptions;
import io.vertx.core.net.KeyStoreOptionsBase;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.SSLEngineOptions;
import io.vertx.core.net.ServerSSLOptions;
import io.vertx.core.net.TrustOptions;
import io.vertx.core.VertxException;

import java.util.ArrayList;
import java.util.List;

/**
 * A server's TLS options with the files they name read into memory and checked: what every handshake uses until the
 * next {@link #load}. Vert.x caches a TLS context by its options, which compare file names, not contents: options that
 * carry the contents themselves get a new context when the files change (a rotation) and the cached one when they
 * have not. Key material given as values, or in a form of an application's own, is passed on as it is.
 */
final class TlsMaterial {

  private TlsMaterial() {
  }

  /**
   * Reads and checks {@code configured}'s key material on a worker thread (the files are read blocking), for the TLS
   * engine {@code engine} selects (Vert.x's {@code sslEngineOptions}; null for the default, the JDK's).
   */
  static Future<ServerSSLOptions> load(Vertx vertx, ServerSSLOptions configured, SSLEngineOptions engine) {
    ServerSSLOptions copy = configured.copy();
    return vertx.executeBlocking(() -> loadBlocking(vertx, copy, engine), false);
  }

  /**
   * {@code configured} with its files' contents in place of their names, once key and trust material load.
   *
   * @throws VertxException saying which file or which material does not load, and why
   * @throws IllegalArgumentException naming the key ({@code netServerOptions.enabledCipherSuites}, ...) whose value the
   *         engine does not support
   */
  static ServerSSLOptions loadBlocking(Vertx vertx, ServerSSLOptions configured, SSLEngineOptions engine) {
    if (configured.getKeyCertOptions() == null) {
      throw new VertxException("TLS needs a key and certificate (netServerOptions: pemKeyCertOptions, pfxKeyCertOptions or "
        + "keyStoreOptions, the JKS form; in code, setKeyCertOptions; or the tls section)", true);
    }
    TlsEngineSupport.of(engine).check(configured);
    ServerSSLOptions loaded = configured.copy();
    loaded.setKeyCertOptions(keyCert(vertx, configured.getKeyCertOptions()));
    if (configured.getTrustOptions() != null) {
      loaded.setTrustOptions(trust(vertx, configured.getTrustOptions()));
    }
    javax.net.ssl.KeyManagerFactory keys;
    try {
      keys = loaded.getKeyCertOptions().getKeyManagerFactory(vertx);
    } catch (Exception e) {
      throw new VertxException("the TLS key and certificate do not load" + files(configured.getKeyCertOptions()) + ": "
        + reason(e, configured.getKeyCertOptions()), e, true);
    }
    requireMatchingPairs(keys);
    if (loaded.getTrustOptions() != null) {
      try {
        loaded.getTrustOptions().getTrustManagerFactory(vertx);
      } catch (Exception e) {
        throw new VertxException("the TLS trust store (for clientAuth) does not load" + files(configured.getTrustOptions()) + ": "
          + reason(e, configured.getTrustOptions()), e,
          true);
      }
    }
    return loaded;
  }

  /**
   * Each private key signs, and its certificate's public key verifies: a key that is not the certificate's (a
   * rotation that replaced one file of the pair, or the wrong one) loads without a word and fails every handshake.
   * Refused here, the certificate in use is kept.
   */
  private static void requireMatchingPairs(javax.net.ssl.KeyManagerFactory keys) {
    for (javax.net.ssl.KeyManager manager : keys.getKeyManagers()) {
      if (!(manager instanceof javax.net.ssl.X509KeyManager x509)) {
        continue;
      }
      for (String type : new String[] {"RSA", "EC", "EdDSA", "Ed25519", "RSASSA-PSS"}) {
        String[] aliases = x509.getServerAliases(type, null);
        for (String alias : aliases == null ? new String[0] : aliases) {
          java.security.PrivateKey key = x509.getPrivateKey(alias);
          java.security.cert.X509Certificate[] chain = x509.getCertificateChain(alias);
          if (key != null && chain != null && chain.length > 0 && !matches(key, chain[0].getPublicKey())) {
            throw new VertxException("the TLS private key does not belong to its certificate (" + chain[0].getSubjectX500Principal()
              + "): replace the key and certificate together", true);
          }
        }
      }
    }
  }

  private static boolean matches(java.security.PrivateKey key, java.security.PublicKey publicKey) {
    String algorithm = switch (key.getAlgorithm()) {
      case "RSA" -> "SHA256withRSA";
      case "EC" -> "SHA256withECDSA";
      case "Ed25519", "EdDSA" -> "Ed25519";
      default -> null;
    };
    if (algorithm == null || !key.getAlgorithm().equals(publicKey.getAlgorithm())) {
      return algorithm == null;
    }
    try {
      byte[] probe = "frame-echo: does this key belong to this certificate?".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
      java.security.Signature signer = java.security.Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(probe);
      byte[] signature = signer.sign();
      java.security.Signature verifier = java.security.Signature.getInstance(algorithm);
      verifier.initVerify(publicKey);
      verifier.update(probe);
      return verifier.verify(signature);
    } catch (java.security.GeneralSecurityException e) {
      return false;
    }
  }

  /**
   * {@code " from key file a.pem, certificate file b.pem"}: the files the material came from, so that the operator
   * knows which one to look at; empty for material given inline.
   */
  private static String files(Object options) {
    List<String> files = new ArrayList<>();
    if (options instanceof PemKeyCertOptions pem) {
      pem.getKeyPaths().forEach(path -> files.add("key file " + path));
      pem.getCertPaths().forEach(path -> files.add("certificate file " + path));
    } else if (options instanceof PemTrustOptions pem) {
      pem.getCertPaths().forEach(path -> files.add("certificate file " + path));
    } else if (options instanceof KeyStoreOptionsBase store && store.getPath() != null) {
      files.add("key store " + store.getPath());
    }
    return files.isEmpty() ? "" : " from " + String.join(", ", files);
  }

  private static KeyCertOptions keyCert(Vertx vertx, KeyCertOptions options) {
    if (options instanceof PemKeyCertOptions pem) {
      PemKeyCertOptions loaded = new PemKeyCertOptions();
      loaded.setKeyValues(values(vertx, pem.getKeyPaths(), pem.getKeyValues()));
      loaded.setCertValues(values(vertx, pem.getCertPaths(), pem.getCertValues()));
      return loaded;
    }
    if (options instanceof KeyStoreOptionsBase store) {
      return (KeyCertOptions) inline(vertx, store);
    }
    return options.copy();
  }

  private static TrustOptions trust(Vertx vertx, TrustOptions options) {
    if (options instanceof PemTrustOptions pem) {
      PemTrustOptions loaded = new PemTrustOptions();
      values(vertx, pem.getCertPaths(), pem.getCertValues()).forEach(loaded::addCertValue);
      return loaded;
    }
    if (options instanceof KeyStoreOptionsBase store) {
      return (TrustOptions) inline(vertx, store);
    }
    return options.copy();
  }

  private static KeyStoreOptionsBase inline(Vertx vertx, KeyStoreOptionsBase store) {
    KeyStoreOptionsBase loaded = store.copy();
    if (store.getPath() != null) {
      loaded.setValue(read(vertx, store.getPath()));
      loaded.setPath(null);
    }
    return loaded;
  }

  /** The contents of {@code paths}, then {@code values}: the order Vert.x pairs keys with certificates in. */
  private static List<Buffer> values(Vertx vertx, List<String> paths, List<Buffer> values) {
    List<Buffer> all = new ArrayList<>();
    if (paths != null) {
      paths.forEach(path -> all.add(read(vertx, path)));
    }
    if (values != null) {
      all.addAll(values);
    }
    return all;
  }

  private static Buffer read(Vertx vertx, String path) {
    try {
      return vertx.fileSystem().readFileBlocking(path);
    } catch (RuntimeException e) {
      Throwable root = root(e);
      String why = root instanceof java.nio.file.NoSuchFileException ? "no such file"
        : root instanceof java.nio.file.AccessDeniedException ? "permission denied" : reason(e);
      throw new VertxException("cannot read the TLS file " + path + (why.equals(path) ? "" : ": " + why), e, true);
    }
  }

  /**
   * Why a key or trust store did not load; a wrong password as such when the JDK says so: its key stores throw an
   * {@code IOException} caused by an {@code UnrecoverableKeyException}, or naming the password, whose own root cause
   * ("failed to decrypt safe contents entry: BadPaddingException") does not tell.
   */
  private static String reason(Throwable e, Object options) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      String message = t.getMessage();
      if (t instanceof java.io.IOException && (t.getCause() instanceof java.security.UnrecoverableKeyException
        || (message != null && message.toLowerCase(java.util.Locale.ROOT).contains("password")))) {
        String store = options instanceof KeyStoreOptionsBase base && base.getPath() != null ? base.getPath() : "the key store";
        return "wrong password for " + store + "? (the JDK says: " + (message != null ? message : t.getCause().getMessage()) + ")";
      }
    }
    return reason(e);
  }

  private static String reason(Throwable e) {
    Throwable root = root(e);
    return root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName();
  }

  private static Throwable root(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root;
  }

  /** Checks {@code options}' TLS settings and loads their material, binding nothing (see {@code FrameEchoServer.checkTls}). */
  static Future<Void> check(Vertx vertx, FrameEchoOptions options) {
    ServerSSLOptions tls;
    try {
      StartupChecks.checkTls(options);
      tls = StartupChecks.serverSslOptions(options);
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(e);
    }
    return tls == null ? Future.succeededFuture()
      : load(vertx, tls, options.getNetServerOptions().getSslEngineOptions()).mapEmpty();
  }
}
