package io.frameecho.server;

import io.frameecho.protocol.LengthField;
import io.frameecho.server.impl.ConfigValues;
import io.frameecho.server.impl.NetServerOptionsJson;
import io.frameecho.server.impl.StartupChecks;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.annotations.GenIgnore;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetServerOptions;

import java.util.List;
import java.util.Set;

/**
 * The server's settings, with their defaults and the one place where they are validated.
 * <p>
 * What each key means, its default and its range are described once, in the configuration table of
 * {@code src/docs/OPERATING.md} (a test checks that table against the keys and these defaults); the setters
 * here say only what a Java caller needs besides.
 * <p>
 * {@link #FrameEchoOptions(JsonObject)} reads the verticle's {@code config()}: an absent key keeps its
 * default; a value of the wrong type, out of range, or an unknown key throws
 * {@link IllegalArgumentException} naming the key and the reason, so a bad configuration fails at start.
 * <p>
 * A Vert.x data object: its JSON converter ({@code FrameEchoOptionsConverter}) is generated from the getters and
 * setters; {@code framing} and {@code netServerOptions}, read and written by their own code, are left out of it.
 */
@DataObject
@JsonGen(publicConverter = false)
public class FrameEchoOptions {

  public static final String DEFAULT_HOST = "0.0.0.0";
  public static final int DEFAULT_PORT = 1234;
  public static final int DEFAULT_MAX_FRAME_SIZE = LengthField.DEFAULT_MAX_FRAME_SIZE;
  public static final int DEFAULT_WRITE_QUEUE_MAX_SIZE = 64 * 1024;

  public static final int DEFAULT_MAX_CONNECTIONS = 10_000;
  public static final int DEFAULT_MAX_CONNECTIONS_PER_IP = 0;
  public static final long DEFAULT_IDLE_GIVE_WAY_MS = 1_000;
  public static final long DEFAULT_MAX_BUFFERED_BYTES = 0;
  public static final long DEFAULT_BUDGET_GRACE_MS = 1_000;
  public static final long DEFAULT_IDLE_TIMEOUT_MS = 0;
  /** Redis's {@code tcp-keepalive} default: a dead peer is found within about twice this. */
  public static final int DEFAULT_KEEP_ALIVE_SECONDS = 300;
  public static final long DEFAULT_FRAME_TIMEOUT_MS = 15_000;
  public static final long DEFAULT_WRITE_STALL_TIMEOUT_MS = 30_000;
  public static final long DEFAULT_LINGER_TIMEOUT_MS = 5_000;
  public static final long DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

  public static final long DEFAULT_DRAIN_DELAY_MS = 0;

  public static final String DEFAULT_TRANSPORT = "auto";
  private static final List<String> TRANSPORTS = List.of("auto", "nio", "epoll", "io_uring");

  /** The longest unix socket path, in bytes: Linux's {@code sun_path} is 108 bytes with the closing NUL. */
  public static final int MAX_UNIX_SOCKET_PATH_BYTES = 107;
  /** The longest {@code handoverSocket}: room left for the suffix a process binds it with first. */
  public static final int MAX_HANDOVER_SOCKET_PATH_BYTES = MAX_UNIX_SOCKET_PATH_BYTES - 24;

  /** Ports from -65535 to -1 ask for a random port shared by every instance that uses the same value. */
  private static final int MIN_PORT = -65535;
  private static final int MAX_PORT = 65535;

  private String host = DEFAULT_HOST;
  private int port = DEFAULT_PORT;
  private String unixSocket = "";
  private int maxFrameSize = DEFAULT_MAX_FRAME_SIZE;
  private LengthField framing = LengthField.DEFAULT;
  private int writeQueueMaxSize = DEFAULT_WRITE_QUEUE_MAX_SIZE;
  private HandlerOptions handler = new HandlerOptions();
  private int maxConnections = DEFAULT_MAX_CONNECTIONS;
  private int maxConnectionsPerIp = DEFAULT_MAX_CONNECTIONS_PER_IP;
  private long idleGiveWayMs = DEFAULT_IDLE_GIVE_WAY_MS;
  private long maxBufferedBytes = DEFAULT_MAX_BUFFERED_BYTES;
  private long budgetGraceMs = DEFAULT_BUDGET_GRACE_MS;
  private long idleTimeoutMs = DEFAULT_IDLE_TIMEOUT_MS;
  private int keepAliveSeconds = DEFAULT_KEEP_ALIVE_SECONDS;
  private long frameTimeoutMs = DEFAULT_FRAME_TIMEOUT_MS;
  private long writeStallTimeoutMs = DEFAULT_WRITE_STALL_TIMEOUT_MS;
  private long lingerTimeoutMs = DEFAULT_LINGER_TIMEOUT_MS;
  private long shutdownTimeoutMs = DEFAULT_SHUTDOWN_TIMEOUT_MS;
  private TlsOptions tls;
  private NetServerOptions netServerOptions = new NetServerOptions();
  private String proxyTrustedPeers = "";
  private long drainDelayMs = DEFAULT_DRAIN_DELAY_MS;
  private String handoverSocket = "";
  private String transport = DEFAULT_TRANSPORT;
  private MetricsOptions metrics = new MetricsOptions();

  /** The defaults. */
  public FrameEchoOptions() {
  }

  /** A copy of {@code other}: its sections and Vert.x's options are copies too. */
  public FrameEchoOptions(FrameEchoOptions other) {
    // Through the converter, without the checks of the JSON constructor: a copy is made as it is, and checked at listen.
    FrameEchoOptionsConverter.fromJson(other.toJson(), this);
    framing = other.framing;
    netServerOptions = new NetServerOptions(other.netServerOptions);
  }

  /**
   * Reads options from JSON, as found in {@code conf/config.json}.
   *
   * @throws IllegalArgumentException naming the key, on an unknown key or a bad value
   */
  public FrameEchoOptions(JsonObject json) {
    ConfigValues.check(json, "", ConfigValues.allKeys(), Set.of("tls"));
    FrameEchoOptionsConverter.fromJson(json, this);
    if (json.containsKey("framing")) {
      setFraming(LengthField.fromJson(json.getJsonObject("framing"), "framing."));
    }
    if (json.containsKey("netServerOptions")) {
      setNetServerOptions(json.getJsonObject("netServerOptions"));
    }
    StartupChecks.checkOptions(this);
  }

  /** Whether the server serves TLS: the {@code tls} section, or {@code ssl} in {@code netServerOptions}. */
  @GenIgnore
  public boolean isTls() {
    return tls != null || netServerOptions.isSsl();
  }

  /** These options as JSON, as {@link #FrameEchoOptions(JsonObject)} reads them; an unset {@code tls} is a JSON null. */
  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    FrameEchoOptionsConverter.toJson(this, json);
    // The converter leaves an unset section out; conf/config.json lists every key, tls as null.
    return json.put("tls", tls == null ? null : tls.toJson()).put("framing", framing.toJson())
      .put("netServerOptions", NetServerOptionsJson.write(netServerOptions));
  }

  /** {@code host}. */
  public String getHost() {
    return host;
  }

  /** The address to bind; {@code 0.0.0.0} for every interface. */
  public FrameEchoOptions setHost(String host) {
    this.host = ConfigValues.requireHost("host", host);
    return this;
  }

  /** {@code port}. */
  public int getPort() {
    return port;
  }

  /** The TCP port; 0 picks a free one (per instance), a negative value a free one shared by instances. */
  public FrameEchoOptions setPort(int port) {
    if (port < MIN_PORT || port > MAX_PORT) {
      throw new IllegalArgumentException("port: " + port + " is out of range (0 to 65535, or -65535 to -1 "
        + "for a random port shared by all instances)");
    }
    this.port = port;
    return this;
  }

  /** {@code unixSocket}; empty for TCP. */
  public String getUnixSocket() {
    return unixSocket;
  }

  /** {@code unixSocket}: a unix domain socket path instead of host and port; empty for TCP. */
  public FrameEchoOptions setUnixSocket(String unixSocket) {
    this.unixSocket = ConfigValues.requireSocketPath("unixSocket", unixSocket, MAX_UNIX_SOCKET_PATH_BYTES,
      "a unix socket path has at most " + MAX_UNIX_SOCKET_PATH_BYTES);
    return this;
  }

  /** The socket this server listens on: the {@code unixSocket} path, or null to listen on host and port. */
  public io.vertx.core.net.SocketAddress unixSocketAddress() {
    return unixSocket.isEmpty() ? null : io.vertx.core.net.SocketAddress.domainSocketAddress(unixSocket);
  }

  /** {@code maxFrameSize}. */
  public int getMaxFrameSize() {
    return maxFrameSize;
  }

  /** {@code maxFrameSize}: the largest request payload, in bytes. */
  public FrameEchoOptions setMaxFrameSize(int maxFrameSize) {
    this.maxFrameSize = ConfigValues.requirePositive("maxFrameSize", maxFrameSize);
    return this;
  }

  /** {@code framing}. */
  @GenIgnore
  public LengthField getFraming() {
    return framing;
  }

  /**
   * {@code framing}: the form of the frames' headers, for requests and answers alike; {@link LengthField#DEFAULT} is
   * frame-echo's own. {@code maxFrameSize} bounds the bytes after the header.
   */
  @GenIgnore
  public FrameEchoOptions setFraming(LengthField framing) {
    this.framing = java.util.Objects.requireNonNull(framing, "framing");
    return this;
  }

  /** {@code writeQueueMaxSize}. */
  public int getWriteQueueMaxSize() {
    return writeQueueMaxSize;
  }

  /** {@code writeQueueMaxSize}: bytes of responses a connection may queue before it stops reading. */
  public FrameEchoOptions setWriteQueueMaxSize(int writeQueueMaxSize) {
    this.writeQueueMaxSize = ConfigValues.requirePositive("writeQueueMaxSize", writeQueueMaxSize);
    return this;
  }

  /** The {@code handler} section. */
  public HandlerOptions getHandler() {
    return handler;
  }

  /** Which application answers request frames; see {@link HandlerOptions}. */
  public FrameEchoOptions setHandler(HandlerOptions handler) {
    this.handler = java.util.Objects.requireNonNull(handler, "handler");
    return this;
  }

  /** {@code maxConnections}. */
  public int getMaxConnections() {
    return maxConnections;
  }

  /** {@code maxConnections}: connections served at once by all instances of a deployment; 0 = no limit. */
  public FrameEchoOptions setMaxConnections(int maxConnections) {
    this.maxConnections = ConfigValues.requireNonNegative("maxConnections", maxConnections);
    return this;
  }

  /** {@code maxConnectionsPerIp}. */
  public int getMaxConnectionsPerIp() {
    return maxConnectionsPerIp;
  }

  /** {@code maxConnectionsPerIp}: connections one client address may hold; 0 = no limit. */
  public FrameEchoOptions setMaxConnectionsPerIp(int maxConnectionsPerIp) {
    this.maxConnectionsPerIp = ConfigValues.requireNonNegative("maxConnectionsPerIp", maxConnectionsPerIp);
    return this;
  }

  /** {@code maxBufferedBytes}, as set (0: automatic). */
  public long getMaxBufferedBytes() {
    return maxBufferedBytes;
  }

  /** {@code maxBufferedBytes}: the buffer budget, in bytes; 0 = a quarter of the JVM's maximum heap. */
  public FrameEchoOptions setMaxBufferedBytes(long maxBufferedBytes) {
    if (maxBufferedBytes < 0) {
      throw new IllegalArgumentException("maxBufferedBytes: " + maxBufferedBytes + " cannot be negative (0 means automatic)");
    }
    this.maxBufferedBytes = maxBufferedBytes;
    return this;
  }

  /** {@link #getMaxBufferedBytes()} with the automatic value worked out. */
  public long effectiveMaxBufferedBytes() {
    return maxBufferedBytes > 0 ? maxBufferedBytes : Runtime.getRuntime().maxMemory() / 4;
  }

  /** {@code idleGiveWayMs}. */
  public long getIdleGiveWayMs() {
    return idleGiveWayMs;
  }

  /** {@code idleGiveWayMs}: how long a connection must be quiet to give its slot to a newcomer; 0 = never. */
  public FrameEchoOptions setIdleGiveWayMs(long idleGiveWayMs) {
    this.idleGiveWayMs = ConfigValues.requireNonNegative("idleGiveWayMs", idleGiveWayMs);
    return this;
  }

  /** {@code idleTimeoutMs}. */
  public long getIdleTimeoutMs() {
    return idleTimeoutMs;
  }

  /** {@code idleTimeoutMs}; 0 = off. */
  public FrameEchoOptions setIdleTimeoutMs(long idleTimeoutMs) {
    this.idleTimeoutMs = ConfigValues.requireNonNegative("idleTimeoutMs", idleTimeoutMs);
    return this;
  }

  /** {@code keepAliveSeconds}. */
  public int getKeepAliveSeconds() {
    return keepAliveSeconds;
  }

  /** {@code keepAliveSeconds}: TCP keep-alive probes after this long without a packet; 0 = off. */
  public FrameEchoOptions setKeepAliveSeconds(int keepAliveSeconds) {
    this.keepAliveSeconds = ConfigValues.requireNonNegative("keepAliveSeconds", keepAliveSeconds);
    return this;
  }

  /** {@code frameTimeoutMs}. */
  public long getFrameTimeoutMs() {
    return frameTimeoutMs;
  }

  /** {@code frameTimeoutMs}; 0 = off. */
  public FrameEchoOptions setFrameTimeoutMs(long frameTimeoutMs) {
    this.frameTimeoutMs = ConfigValues.requireNonNegative("frameTimeoutMs", frameTimeoutMs);
    return this;
  }

  /** {@code writeStallTimeoutMs}. */
  public long getWriteStallTimeoutMs() {
    return writeStallTimeoutMs;
  }

  /** {@code writeStallTimeoutMs}; 0 = off. */
  public FrameEchoOptions setWriteStallTimeoutMs(long writeStallTimeoutMs) {
    this.writeStallTimeoutMs = ConfigValues.requireNonNegative("writeStallTimeoutMs", writeStallTimeoutMs);
    return this;
  }

  /** {@code shutdownTimeoutMs}. */
  public long getShutdownTimeoutMs() {
    return shutdownTimeoutMs;
  }

  /** {@code shutdownTimeoutMs}. */
  public FrameEchoOptions setShutdownTimeoutMs(long shutdownTimeoutMs) {
    this.shutdownTimeoutMs = ConfigValues.requireNonNegative("shutdownTimeoutMs", shutdownTimeoutMs);
    return this;
  }

  /** The {@code tls} section; null for none. */
  public TlsOptions getTls() {
    return tls;
  }

  /** Serve TLS with these PEM files; null for plain TCP. */
  public FrameEchoOptions setTls(TlsOptions tls) {
    this.tls = tls;
    return this;
  }

  /** Vert.x's own options, as held (not a copy). */
  @GenIgnore
  public NetServerOptions getNetServerOptions() {
    return netServerOptions;
  }

  /**
   * Vert.x's own TCP and TLS options, held as they are (not copied) and applied before frame-echo's own settings.
   * Those that would break its promises, and a host or port of their own ({@link #setHost host} and
   * {@link #setPort port} say where the server listens), are refused when the server listens.
   */
  @GenIgnore
  public FrameEchoOptions setNetServerOptions(NetServerOptions netServerOptions) {
    this.netServerOptions = java.util.Objects.requireNonNull(netServerOptions, "netServerOptions");
    return this;
  }

  /**
   * {@link #setNetServerOptions(NetServerOptions)} from JSON with Vert.x's JSON names ({@code pfxKeyCertOptions}, ...),
   * strictly: a name or a value Vert.x would ignore or refuses, and {@code host} or {@code port}, fail here.
   *
   * @throws IllegalArgumentException naming the key ({@code netServerOptions.…})
   */
  @GenIgnore
  public FrameEchoOptions setNetServerOptions(JsonObject netServerOptions) {
    this.netServerOptions = NetServerOptionsJson.read(netServerOptions);
    return this;
  }

  /** {@code proxyTrustedPeers}. */
  public String getProxyTrustedPeers() {
    return proxyTrustedPeers;
  }

  /** {@code proxyTrustedPeers}: comma-separated CIDR ranges ({@code 10.0.0.0/8,2001:db8::/32}); empty: any peer. */
  public FrameEchoOptions setProxyTrustedPeers(String proxyTrustedPeers) {
    java.util.Objects.requireNonNull(proxyTrustedPeers, "proxyTrustedPeers");
    try {
      io.frameecho.server.impl.shared.PeerRanges.parse(proxyTrustedPeers);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("proxyTrustedPeers: " + e.getMessage(), e);
    }
    this.proxyTrustedPeers = proxyTrustedPeers;
    return this;
  }

  /** {@code transport}. */
  public String getTransport() {
    return transport;
  }

  /** {@code transport}: {@code auto}, {@code nio}, {@code epoll} or {@code io_uring}; read by the launcher only. */
  public FrameEchoOptions setTransport(String transport) {
    if (!TRANSPORTS.contains(transport)) {
      throw new IllegalArgumentException("transport: " + ConfigValues.quote(transport) + " is not one of " + String.join(", ", TRANSPORTS));
    }
    this.transport = transport;
    return this;
  }

  /** {@code budgetGraceMs}. */
  public long getBudgetGraceMs() {
    return budgetGraceMs;
  }

  /** {@code budgetGraceMs}: at least 1. */
  public FrameEchoOptions setBudgetGraceMs(long budgetGraceMs) {
    this.budgetGraceMs = ConfigValues.requirePositive("budgetGraceMs", budgetGraceMs);
    return this;
  }

  /** {@code lingerTimeoutMs}. */
  public long getLingerTimeoutMs() {
    return lingerTimeoutMs;
  }

  /** {@code lingerTimeoutMs}: how long a closing connection keeps reading after its FIN; 0 = close at once. */
  public FrameEchoOptions setLingerTimeoutMs(long lingerTimeoutMs) {
    this.lingerTimeoutMs = ConfigValues.requireNonNegative("lingerTimeoutMs", lingerTimeoutMs);
    return this;
  }

  /** {@code drainDelayMs}. */
  public long getDrainDelayMs() {
    return drainDelayMs;
  }

  /** {@code drainDelayMs}. */
  public FrameEchoOptions setDrainDelayMs(long drainDelayMs) {
    this.drainDelayMs = ConfigValues.requireNonNegative("drainDelayMs", drainDelayMs);
    return this;
  }

  /** {@code handoverSocket}; empty for none. */
  public String getHandoverSocket() {
    return handoverSocket;
  }

  /**
   * {@code handoverSocket}: a unix socket path; empty for none. At most {@link #MAX_HANDOVER_SOCKET_PATH_BYTES} bytes:
   * each process binds its own socket next to the path (the path, a dot, its process id and a count) first.
   */
  public FrameEchoOptions setHandoverSocket(String handoverSocket) {
    this.handoverSocket = ConfigValues.requireSocketPath("handoverSocket", handoverSocket, MAX_HANDOVER_SOCKET_PATH_BYTES,
      "at most " + MAX_HANDOVER_SOCKET_PATH_BYTES + " (a unix socket path has at most " + MAX_UNIX_SOCKET_PATH_BYTES
        + ", and a process binds the path with a suffix first)");
    return this;
  }

  /** The {@code metrics} section. */
  public MetricsOptions getMetrics() {
    return metrics;
  }

  /** frame-echo's meters and, when asked for, the metrics and health endpoint; see {@link MetricsOptions}. */
  public FrameEchoOptions setMetrics(MetricsOptions metrics) {
    this.metrics = java.util.Objects.requireNonNull(metrics, "metrics");
    return this;
  }

  /** {@link #toJson()}, encoded. */
  @Override
  public String toString() {
    return toJson().encode();
  }
}
