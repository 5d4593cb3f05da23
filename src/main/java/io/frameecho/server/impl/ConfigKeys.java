package io.frameecho.server.impl;

import io.frameecho.protocol.LengthField;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.HandlerOptions;
import io.frameecho.server.MetricsOptions;
import io.frameecho.server.TlsOptions;
import io.vertx.core.net.NetServerOptions;

import java.util.List;

/**
 * The configuration's keys, each written once: JSON reading, {@code toJson}, the options' copy constructors and the
 * launcher's {@code FRAME_ECHO_*} environment variables follow these tables.
 */
public final class ConfigKeys {

  private ConfigKeys() {
  }

  /** {@code HandlerOptions}'s keys, in {@code conf/config.json}'s order. */
  public static final List<OptionKey<HandlerOptions, ?>> HANDLER = List.of(
    OptionKey.string("type", HandlerOptions::getType, HandlerOptions::setType),
    OptionKey.string("address", HandlerOptions::getAddress, HandlerOptions::setAddress),
    // Read as an int, as it always was (a value past 2^31 - 1 is refused), kept as a long.
    OptionKey.value("timeoutMs", OptionKey.Type.INTEGER, (key, value) -> (long) ConfigValues.integer(key, value),
      HandlerOptions::getTimeoutMs, HandlerOptions::setTimeoutMs),
    OptionKey.integer("maxInFlight", HandlerOptions::getMaxInFlight, HandlerOptions::setMaxInFlight),
    OptionKey.longInteger("resendAfterMs", HandlerOptions::getResendAfterMs, HandlerOptions::setResendAfterMs),
    OptionKey.longInteger("heldAfterTimeoutMs", HandlerOptions::getHeldAfterTimeoutMs, HandlerOptions::setHeldAfterTimeoutMs),
    OptionKey.longInteger("nodeLeftGraceMs", HandlerOptions::getNodeLeftGraceMs, HandlerOptions::setNodeLeftGraceMs));

  /** {@code MetricsOptions}'s keys, in {@code conf/config.json}'s order. */
  public static final List<OptionKey<MetricsOptions, ?>> METRICS = List.of(
    OptionKey.bool("enabled", MetricsOptions::isEnabled, MetricsOptions::setEnabled),
    OptionKey.string("host", MetricsOptions::getHost, MetricsOptions::setHost),
    OptionKey.integer("port", MetricsOptions::getPort, MetricsOptions::setPort),
    OptionKey.bool("endpoint", MetricsOptions::isEndpoint, MetricsOptions::setEndpoint),
    OptionKey.string("registryName", MetricsOptions::getRegistryName, MetricsOptions::setRegistryName),
    OptionKey.string("server", MetricsOptions::getServer, MetricsOptions::setServer));

  /** {@code TlsOptions}'s keys, in {@code conf/config.json}'s order. */
  public static final List<OptionKey<TlsOptions, ?>> TLS = List.of(
    OptionKey.string("certPath", TlsOptions::getCertPath, TlsOptions::setCertPath),
    OptionKey.string("keyPath", TlsOptions::getKeyPath, TlsOptions::setKeyPath));

  /** {@code FrameEchoOptions}'s keys, in {@code conf/config.json}'s order. */
  public static final List<OptionKey<FrameEchoOptions, ?>> FRAME_ECHO = List.of(
    OptionKey.string("host", FrameEchoOptions::getHost, FrameEchoOptions::setHost),
    OptionKey.integer("port", FrameEchoOptions::getPort, FrameEchoOptions::setPort),
    OptionKey.string("unixSocket", FrameEchoOptions::getUnixSocket, FrameEchoOptions::setUnixSocket),
    OptionKey.integer("maxFrameSize", FrameEchoOptions::getMaxFrameSize, FrameEchoOptions::setMaxFrameSize),
    OptionKey.typedObject("framing", json -> LengthField.fromJson(json, "framing."), FrameEchoOptions::getFraming,
      FrameEchoOptions::setFraming, LengthField::toJson, framing -> framing),
    OptionKey.integer("writeQueueMaxSize", FrameEchoOptions::getWriteQueueMaxSize, FrameEchoOptions::setWriteQueueMaxSize),
    OptionKey.section("handler", HANDLER, HandlerOptions::new, HandlerOptions::new, HandlerOptions::toJson,
      FrameEchoOptions::getHandler, FrameEchoOptions::setHandler),
    OptionKey.integer("maxConnections", FrameEchoOptions::getMaxConnections, FrameEchoOptions::setMaxConnections),
    OptionKey.integer("maxConnectionsPerIp", FrameEchoOptions::getMaxConnectionsPerIp, FrameEchoOptions::setMaxConnectionsPerIp),
    OptionKey.longInteger("idleGiveWayMs", FrameEchoOptions::getIdleGiveWayMs, FrameEchoOptions::setIdleGiveWayMs),
    OptionKey.longInteger("maxBufferedBytes", FrameEchoOptions::getMaxBufferedBytes, FrameEchoOptions::setMaxBufferedBytes),
    OptionKey.longInteger("budgetGraceMs", FrameEchoOptions::getBudgetGraceMs, FrameEchoOptions::setBudgetGraceMs),
    OptionKey.longInteger("idleTimeoutMs", FrameEchoOptions::getIdleTimeoutMs, FrameEchoOptions::setIdleTimeoutMs),
    OptionKey.integer("keepAliveSeconds", FrameEchoOptions::getKeepAliveSeconds, FrameEchoOptions::setKeepAliveSeconds),
    OptionKey.longInteger("frameTimeoutMs", FrameEchoOptions::getFrameTimeoutMs, FrameEchoOptions::setFrameTimeoutMs),
    OptionKey.longInteger("writeStallTimeoutMs", FrameEchoOptions::getWriteStallTimeoutMs, FrameEchoOptions::setWriteStallTimeoutMs),
    OptionKey.longInteger("lingerTimeoutMs", FrameEchoOptions::getLingerTimeoutMs, FrameEchoOptions::setLingerTimeoutMs),
    OptionKey.longInteger("shutdownTimeoutMs", FrameEchoOptions::getShutdownTimeoutMs, FrameEchoOptions::setShutdownTimeoutMs),
    OptionKey.optionalSection("tls", TLS, TlsOptions::new, TlsOptions::new, TlsOptions::toJson,
      FrameEchoOptions::getTls, FrameEchoOptions::setTls),
    OptionKey.typedObject("netServerOptions", NetServerOptionsJson::read, FrameEchoOptions::getNetServerOptions,
      FrameEchoOptions::setNetServerOptions, NetServerOptionsJson::write, NetServerOptions::new),
    OptionKey.string("proxyTrustedPeers", FrameEchoOptions::getProxyTrustedPeers, FrameEchoOptions::setProxyTrustedPeers),
    OptionKey.string("transport", FrameEchoOptions::getTransport, FrameEchoOptions::setTransport),
    OptionKey.longInteger("drainDelayMs", FrameEchoOptions::getDrainDelayMs, FrameEchoOptions::setDrainDelayMs),
    OptionKey.string("handoverSocket", FrameEchoOptions::getHandoverSocket, FrameEchoOptions::setHandoverSocket),
    OptionKey.section("metrics", METRICS, MetricsOptions::new, MetricsOptions::new, MetricsOptions::toJson,
      FrameEchoOptions::getMetrics, FrameEchoOptions::setMetrics));
}
