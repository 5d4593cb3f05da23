package io.frameecho.server.impl;

import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.HandshakeFailure;
import io.frameecho.server.impl.netty.TlsUpgrade;
import io.frameecho.server.impl.shared.ConnectionLimits;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxException;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.KeyCertOptions;
import io.vertx.core.net.KeyStoreOptionsBase;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.OpenSSLEngineOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.SSLEngineOptions;
import io.vertx.core.net.ServerSSLOptions;
import io.vertx.core.net.TrustOptions;
import io.vertx.core.shareddata.Shareable;

import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509KeyManager;
import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Security;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * One server's TLS: Vert.x's {@code upgradeToSsl} on each socket at accept, after it has taken its slot of the limits.
 * Vert.x's own {@code setSsl} hands a socket over only once its handshake is done, so a handshake under way would hold
 * no slot, escape {@code maxConnections} and {@code maxConnectionsPerIp}, and not be closed at shutdown; upgraded at
 * accept, it holds its slot until it fails (counted by cause, one log line) or {@code sslHandshakeTimeout} ends it.
 * <p>
 * The key material is read and checked on a worker thread ({@link #load}) before it is used, so a bad key, pair,
 * protocol or cipher suite fails the start, or is refused by a rotation with the current material kept. Vert.x caches
 * a TLS context by its options, which compare file names: the files' contents go in place of their names, so a
 * rotation of the same paths gets a new context. On the server's event loop, but for {@link #update} (any thread).
 */
final class Tls {

  /** The Vert.x instance's local map where its TLS servers are found by {@link #reloadAll}. */
  private static final String SHARED_KEY = "frame-echo.tls-servers";

  private final Vertx vertx;
  private final Context context;
  private final ConnectionLimits limits;
  private final FrameEchoMetrics metrics;
  private final SSLEngineOptions engine;
  private final Set<NetSocket> underWay = new HashSet<>();
  /** What new handshakes use: {@link #configured} with the files' contents; replaced whole by a rotation. */
  private ServerSSLOptions material;
  /** The options {@link #material} was loaded from (file names): what {@link #reload} reads again. */
  private volatile ServerSSLOptions configured;
  private boolean closing;

  Tls(Vertx vertx, Context context, ServerSSLOptions configured, ServerSSLOptions material, SSLEngineOptions engine,
      ConnectionLimits limits, FrameEchoMetrics metrics) {
    this.vertx = vertx;
    this.context = context;
    this.configured = configured;
    this.material = material;
    this.engine = engine;
    this.limits = limits;
    this.metrics = metrics;
  }

  /** Upgrades {@code socket}, whose slot was taken for {@code ip}; {@code established} gets it once its handshake is done. */
  void begin(NetSocket socket, String ip, Handler<NetSocket> established) {
    underWay.add(socket);
    // A failure comes through the upgrade's future; Vert.x would also log the exception it raises.
    socket.exceptionHandler(e -> {
    });
    TlsUpgrade.upgradeToTls(socket, material).onComplete(upgrade -> {
      if (!underWay.remove(socket)) {
        return;
      }
      if (upgrade.succeeded()) {
        established.handle(socket);
        return;
      }
      limits.release(ip);
      if (!closing) {
        HandshakeFailure why = TlsUpgrade.handshakeFailure(upgrade.cause());
        metrics.handshakeFailed(why);
        limits.handshakeFailed(why, ip, switch (why) {
          case TIMEOUT -> "no complete handshake within " + material.getSslHandshakeTimeout() + " "
            + material.getSslHandshakeTimeoutUnit().name().toLowerCase(Locale.ROOT) + " (sslHandshakeTimeout)";
          case NOT_TLS -> "its first bytes were not a TLS record (a plain-text client?)";
          default -> upgrade.cause().getMessage() != null ? upgrade.cause().getMessage() : upgrade.cause().getClass().getSimpleName();
        });
      }
    });
  }

  /**
   * A rotation: {@code options} are loaded and checked on a worker thread, then new handshakes use them; handshakes
   * under way and open connections keep theirs. If they do not load, nothing changes and the future fails with why.
   */
  Future<Void> update(ServerSSLOptions options) {
    ServerSSLOptions copy = options.copy();
    // Vert.x's options replace every TLS setting at once: a new key passed alone would silently stop asking
    // clients for certificates.
    ClientAuth before = configured.getClientAuth();
    ClientAuth after = copy.getClientAuth();
    if (after.ordinal() < before.ordinal() || (after != ClientAuth.NONE && copy.getTrustOptions() == null)) {
      return Future.failedFuture(new IllegalArgumentException("updateTls: the new options ask clients for certificates "
        + (after.ordinal() < before.ordinal() ? "less than now (clientAuth " + before + ", new " + after + ")" : "without trust options")
        + "; TLS options replace each other whole: pass clientAuth and the trust options again with the new key and "
        + "certificate (to stop asking for client certificates, restart the server); the certificate in use is kept"));
    }
    return load(vertx, copy, engine).compose(loaded -> {
      Promise<Void> swapped = Promise.promise();
      context.runOnContext(v -> {
        material = loaded;
        configured = copy;
        swapped.complete();
      });
      return swapped.future();
    });
  }

  /** Re-reads the files the current options name: a certificate renewed on disk, as SIGHUP does. */
  Future<Void> reload() {
    return update(configured);
  }

  /** From now on, {@link #reloadAll} finds this server; until {@link #closeAll}. */
  void register() {
    servers(vertx).add(this);
  }

  /** On shutdown: the handshakes under way end now (they owe nothing), uncounted. */
  void closeAll() {
    servers(vertx).remove(this);
    closing = true;
    List.copyOf(underWay).forEach(NetSocket::close);
  }

  /** {@link #reload} on every TLS server of {@code vertx}: how many there are, or the first reason one failed. */
  static Future<Integer> reloadAll(Vertx vertx) {
    List<Future<Void>> reloads = new ArrayList<>();
    servers(vertx).forEach(server -> reloads.add(server.reload()));
    return Future.join(reloads).map(reloads.size()).recover(e -> Future.failedFuture(
      reloads.stream().filter(Future::failed).findFirst().map(Future::cause).orElse(e)));
  }

  private static Set<Tls> servers(Vertx vertx) {
    return ((Servers) vertx.sharedData().getLocalMap(SHARED_KEY).computeIfAbsent(SHARED_KEY, k -> new Servers())).set;
  }

  /** The TLS servers of one Vert.x instance. */
  private static final class Servers implements Shareable {
    private final Set<Tls> set = ConcurrentHashMap.newKeySet();
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
    return tls == null ? Future.succeededFuture() : load(vertx, tls, options.getNetServerOptions().getSslEngineOptions()).mapEmpty();
  }

  /**
   * {@code configured} with its files' contents in place of their names, once its key, trust, protocols and cipher
   * suites are checked for {@code engine} (null: the JDK's); read on a worker thread.
   *
   * @throws VertxException (through the future) saying which file or material does not load, and why
   * @throws IllegalArgumentException (through the future) naming the key whose value the engine does not support
   */
  static Future<ServerSSLOptions> load(Vertx vertx, ServerSSLOptions configured, SSLEngineOptions engine) {
    ServerSSLOptions copy = configured.copy();
    return vertx.executeBlocking(() -> loadBlocking(vertx, copy, engine), false);
  }

  private static ServerSSLOptions loadBlocking(Vertx vertx, ServerSSLOptions configured, SSLEngineOptions engine) {
    KeyCertOptions keyCert = configured.getKeyCertOptions();
    if (keyCert == null) {
      throw new VertxException("TLS needs a key and certificate (netServerOptions: pemKeyCertOptions, pfxKeyCertOptions or "
        + "keyStoreOptions, the JKS form; in code, setKeyCertOptions; or the tls section)", true);
    }
    checkEngine(configured, engine);
    ServerSSLOptions loaded = configured.copy();
    if (keyCert instanceof PemKeyCertOptions pem) {
      loaded.setKeyCertOptions(new PemKeyCertOptions().setKeyValues(contents(vertx, pem.getKeyPaths(), pem.getKeyValues()))
        .setCertValues(contents(vertx, pem.getCertPaths(), pem.getCertValues())));
    } else if (keyCert instanceof KeyStoreOptionsBase store) {
      loaded.setKeyCertOptions((KeyCertOptions) inline(vertx, store));
    }
    TrustOptions trust = configured.getTrustOptions();
    if (trust instanceof PemTrustOptions pem) {
      PemTrustOptions values = new PemTrustOptions();
      contents(vertx, pem.getCertPaths(), pem.getCertValues()).forEach(values::addCertValue);
      loaded.setTrustOptions(values);
    } else if (trust instanceof KeyStoreOptionsBase store) {
      loaded.setTrustOptions((TrustOptions) inline(vertx, store));
    }
    try {
      requireMatchingPairs(loaded.getKeyCertOptions().getKeyManagerFactory(vertx).getKeyManagers());
    } catch (VertxException e) {
      throw e;
    } catch (Exception e) {
      throw new VertxException("the TLS key and certificate do not load" + files(keyCert) + ": " + reason(e, keyCert), e, true);
    }
    if (trust != null) {
      try {
        loaded.getTrustOptions().getTrustManagerFactory(vertx);
      } catch (Exception e) {
        throw new VertxException("the TLS trust store (for clientAuth) does not load" + files(trust) + ": " + reason(e, trust), e, true);
      }
    }
    return loaded;
  }

  /**
   * Every cipher suite and protocol the options enable is one the engine supports, and one protocol at least is not
   * disabled: Vert.x checks neither (it drops an unknown protocol without a word; an unknown suite fails every TLS
   * handler as it is made). Empty lists mean the engine's defaults.
   */
  private static void checkEngine(ServerSSLOptions options, SSLEngineOptions engineOptions) {
    boolean openSsl = engineOptions instanceof OpenSSLEngineOptions;
    String engine = openSsl ? "OpenSSL" : "the JDK's TLS engine";
    Set<String> protocols = new java.util.LinkedHashSet<>();
    Predicate<String> suites;
    Set<String> disabled = new HashSet<>();
    if (openSsl) {
      if (!OpenSsl.isAvailable()) {
        Throwable why = OpenSsl.unavailabilityCause();
        throw new IllegalArgumentException("netServerOptions.openSslEngineOptions: OpenSSL is not available ("
          + (why == null ? "no netty-tcnative" : why.getMessage()) + "); put netty-tcnative on the class path or leave the "
          + "engine to the JDK");
      }
      // Netty says which cipher suites OpenSSL has (by their Java or OpenSSL names) but not which protocols: an engine does.
      SslContext context = null;
      try {
        context = SslContextBuilder.forClient().sslProvider(SslProvider.OPENSSL).build();
        SSLEngine probe = context.newEngine(ByteBufAllocator.DEFAULT);
        protocols.addAll(Arrays.asList(probe.getSupportedProtocols()));
        ReferenceCountUtil.release(probe);
      } catch (javax.net.ssl.SSLException e) {
        throw new IllegalStateException("OpenSSL does not start: " + e.getMessage(), e);
      } finally {
        ReferenceCountUtil.release(context);
      }
      suites = OpenSsl::isCipherSuiteAvailable;
    } else {
      SSLEngine probe;
      try {
        probe = SSLContext.getDefault().createSSLEngine();
      } catch (java.security.NoSuchAlgorithmException e) {
        throw new IllegalStateException("the JDK has no TLS engine: " + e.getMessage(), e);
      }
      protocols.addAll(Arrays.asList(probe.getSupportedProtocols()));
      suites = Set.of(probe.getSupportedCipherSuites())::contains;
      // The JDK still supports the protocols its security policy disables; a handshake then finds "No appropriate protocol".
      String policy = Security.getProperty("jdk.tls.disabledAlgorithms");
      for (String entry : policy == null ? new String[0] : policy.split(",")) {
        protocols.stream().filter(p -> p.equalsIgnoreCase(entry.trim())).forEach(disabled::add);
      }
    }
    List<String> unknownSuites = options.getEnabledCipherSuites().stream().filter(suites.negate()).sorted().toList();
    if (!unknownSuites.isEmpty()) {
      throw new IllegalArgumentException("netServerOptions.enabledCipherSuites: not supported by " + engine + ": "
        + String.join(", ", unknownSuites));
    }
    Set<String> enabled = options.getEnabledSecureTransportProtocols();
    List<String> unknown = enabled.stream().filter(p -> !protocols.contains(p)).sorted().toList();
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException("netServerOptions.enabledSecureTransportProtocols: not supported by " + engine + ": "
        + String.join(", ", unknown) + " (it supports " + String.join(", ", protocols) + ")");
    }
    // SSLv2Hello is a hello format, not a protocol a handshake can agree on.
    Predicate<String> usable = p -> !p.equals("SSLv2Hello") && !disabled.contains(p);
    if (enabled.stream().noneMatch(usable)) {
      List<String> off = enabled.stream().filter(disabled::contains).sorted().toList();
      throw new IllegalArgumentException("netServerOptions.enabledSecureTransportProtocols: no protocol a handshake could use"
        + (enabled.isEmpty() ? " (the list is empty)" : off.isEmpty() ? " (SSLv2Hello is a hello format only)"
          : ": " + String.join(", ", off) + (off.size() == 1 ? " is" : " are")
          + " disabled by the JDK's security property jdk.tls.disabledAlgorithms")
        + "; " + engine + " can use " + String.join(", ", protocols.stream().filter(usable).toList()));
    }
  }

  /**
   * Each private key signs what its certificate's public key verifies: a key that is not the certificate's (a
   * rotation that replaced one file of the pair) loads without a word and fails every handshake.
   */
  private static void requireMatchingPairs(KeyManager[] managers) {
    for (KeyManager manager : managers) {
      if (!(manager instanceof X509KeyManager x509)) {
        continue;
      }
      for (String type : new String[] {"RSA", "EC", "EdDSA", "Ed25519", "RSASSA-PSS"}) {
        String[] aliases = x509.getServerAliases(type, null);
        for (String alias : aliases == null ? new String[0] : aliases) {
          PrivateKey key = x509.getPrivateKey(alias);
          X509Certificate[] chain = x509.getCertificateChain(alias);
          if (key != null && chain != null && chain.length > 0 && !matches(key, chain[0].getPublicKey())) {
            throw new VertxException("the TLS private key does not belong to its certificate (" + chain[0].getSubjectX500Principal()
              + "): replace the key and certificate together", true);
          }
        }
      }
    }
  }

  private static boolean matches(PrivateKey key, PublicKey publicKey) {
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
      byte[] probe = "frame-echo: does this key belong to this certificate?".getBytes(StandardCharsets.US_ASCII);
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(probe);
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(publicKey);
      verifier.update(probe);
      return verifier.verify(signer.sign());
    } catch (java.security.GeneralSecurityException e) {
      return false;
    }
  }

  /** {@code " from key file a.pem, certificate file b.pem"}: where the material came from; empty for inline values. */
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

  private static KeyStoreOptionsBase inline(Vertx vertx, KeyStoreOptionsBase store) {
    KeyStoreOptionsBase loaded = store.copy();
    if (store.getPath() != null) {
      loaded.setValue(read(vertx, store.getPath()));
      loaded.setPath(null);
    }
    return loaded;
  }

  /** The contents of {@code paths}, then {@code values}: the order Vert.x pairs keys with certificates in. */
  private static List<Buffer> contents(Vertx vertx, List<String> paths, List<Buffer> values) {
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
   * Why a key or trust store did not load; a wrong password as such: the JDK's key stores throw an {@code IOException}
   * caused by an {@code UnrecoverableKeyException}, or naming the password, whose own root cause does not tell.
   */
  private static String reason(Throwable e, Object options) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      String message = t.getMessage();
      if (t instanceof java.io.IOException && (t.getCause() instanceof java.security.UnrecoverableKeyException
        || (message != null && message.toLowerCase(Locale.ROOT).contains("password")))) {
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
}
