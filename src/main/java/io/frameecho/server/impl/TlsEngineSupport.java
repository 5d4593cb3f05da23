package io.frameecho.server.impl;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.net.OpenSSLEngineOptions;
import io.vertx.core.net.SSLEngineOptions;
import io.vertx.core.net.ServerSSLOptions;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import java.security.NoSuchAlgorithmException;
import java.security.Security;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The protocol versions and cipher suites the TLS engine a server uses supports, to check a server's options against
 * before it serves with them. Vert.x checks neither: it drops a protocol it does not know without a word (every
 * handshake fails once none is left), and a cipher suite the engine does not know fails each connection's TLS handler
 * as it is made, with the client left waiting.
 */
final class TlsEngineSupport {

  /** A hello format, not a protocol a handshake can agree on. */
  private static final String SSL_V2_HELLO = "SSLv2Hello";

  private final String engine;
  private final Set<String> protocols;
  private final Predicate<String> cipherSuite;
  /** Protocols the engine supports and its configuration has disabled, and where that is set. */
  private final Set<String> disabledProtocols;
  private final String disabledBy;

  private TlsEngineSupport(String engine, Set<String> protocols, Predicate<String> cipherSuite, Set<String> disabledProtocols,
                           String disabledBy) {
    this.engine = engine;
    this.protocols = protocols;
    this.cipherSuite = cipherSuite;
    this.disabledProtocols = disabledProtocols;
    this.disabledBy = disabledBy;
  }

  /**
   * The engine {@code options} select: OpenSSL for {@link OpenSSLEngineOptions}, else the JDK's (what Vert.x resolves no
   * engine options to when the JDK has ALPN, as every JDK since 9 has).
   *
   * @throws IllegalArgumentException when OpenSSL is selected and not available
   */
  static TlsEngineSupport of(SSLEngineOptions options) {
    return options instanceof OpenSSLEngineOptions ? openSsl() : jdk();
  }

  private static TlsEngineSupport jdk() {
    SSLParameters supported;
    try {
      supported = SSLContext.getDefault().getSupportedSSLParameters();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no TLS engine: " + e.getMessage(), e);
    }
    Set<String> protocols = new LinkedHashSet<>(Arrays.asList(supported.getProtocols()));
    Set<String> suites = Set.of(supported.getCipherSuites());
    // The JDK still supports the protocols its security policy disables; a handshake then finds "No appropriate protocol".
    Set<String> disabled = new LinkedHashSet<>();
    String policy = Security.getProperty("jdk.tls.disabledAlgorithms");
    for (String entry : policy == null ? new String[0] : policy.split(",")) {
      protocols.stream().filter(p -> p.equalsIgnoreCase(entry.trim())).forEach(disabled::add);
    }
    return new TlsEngineSupport("the JDK's TLS engine", protocols, suites::contains, disabled,
      "the JDK's security property jdk.tls.disabledAlgorithms");
  }

  private static TlsEngineSupport openSsl() {
    if (!OpenSsl.isAvailable()) {
      Throwable why = OpenSsl.unavailabilityCause();
      throw new IllegalArgumentException("netServerOptions.openSslEngineOptions: OpenSSL is not available ("
        + (why == null ? "no netty-tcnative" : why.getMessage()) + "); put netty-tcnative on the class path or leave the "
        + "engine to the JDK");
    }
    // Netty says which cipher suites it has (by their Java or OpenSSL names) but not which protocols: an engine does.
    SslContext context = null;
    try {
      context = SslContextBuilder.forClient().sslProvider(SslProvider.OPENSSL).build();
      javax.net.ssl.SSLEngine probe = context.newEngine(ByteBufAllocator.DEFAULT);
      Set<String> protocols = new LinkedHashSet<>(Arrays.asList(probe.getSupportedProtocols()));
      ReferenceCountUtil.release(probe);
      return new TlsEngineSupport("OpenSSL", protocols, OpenSsl::isCipherSuiteAvailable, Set.of(), "");
    } catch (SSLException e) {
      throw new IllegalStateException("OpenSSL does not start: " + e.getMessage(), e);
    } finally {
      ReferenceCountUtil.release(context);
    }
  }

  /**
   * Every cipher suite and protocol {@code options} enable is one the engine supports, and one protocol at least is not
   * disabled; empty lists mean the engine's defaults.
   *
   * @throws IllegalArgumentException naming the key and the names the engine does not support
   */
  void check(ServerSSLOptions options) {
    List<String> unknownSuites = options.getEnabledCipherSuites().stream().filter(cipherSuite.negate()).sorted().toList();
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
    List<String> usable = new ArrayList<>(enabled);
    usable.removeIf(p -> p.equals(SSL_V2_HELLO) || disabledProtocols.contains(p));
    if (usable.isEmpty()) {
      List<String> disabled = enabled.stream().filter(disabledProtocols::contains).sorted().toList();
      throw new IllegalArgumentException("netServerOptions.enabledSecureTransportProtocols: no protocol a handshake could use"
        + (enabled.isEmpty() ? " (the list is empty)" : disabled.isEmpty() ? " (" + SSL_V2_HELLO + " is a hello format only)"
          : ": " + String.join(", ", disabled) + (disabled.size() == 1 ? " is" : " are") + " disabled by " + disabledBy)
        + "; " + engine + " can use " + String.join(", ", protocols.stream()
          .filter(p -> !p.equals(SSL_V2_HELLO) && !disabledProtocols.contains(p)).toList()));
    }
  }
}
