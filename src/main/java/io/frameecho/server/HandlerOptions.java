package io.frameecho.server;

import io.frameecho.server.impl.ConfigValues;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

import java.util.Set;

/**
 * The {@code "handler"} section of the configuration: which application answers request frames.
 * <ul>
 *   <li>{@code "echo"} (default): the response is the request, at once;</li>
 *   <li>{@code "eventbus"}: each request payload goes as a request message (a {@code Buffer} body) to
 *   {@code address}, anywhere in the cluster, and the reply's body is the response payload;</li>
 *   <li>the name of a class on the class path that implements {@link RequestHandler} with a public no-argument
 *   constructor (such as {@code io.frameecho.example.UpperCaseHandler}): it answers, as one given in code would.</li>
 * </ul>
 * {@link FrameEchoVerticle} (and so the jar) builds the handler the type names; a {@code FrameEchoServer} created in code
 * answers with the handler given to it, the echo by default.
 * <p>
 * Each key ({@code handler.…}) is described once, in the configuration table of {@code src/docs/OPERATING.md}.
 */
@DataObject
@JsonGen(publicConverter = false)
public class HandlerOptions {

  public static final String ECHO = "echo";
  public static final String EVENT_BUS = "eventbus";

  public static final String DEFAULT_TYPE = ECHO;
  public static final String DEFAULT_ADDRESS = "frame-echo.requests";
  /**
   * The header that marks the event-bus handler's probe for a consumer (an empty {@code Buffer}): a consumer may answer
   * it with anything, or not at all.
   */
  public static final String PROBE_HEADER = "frame-echo-probe";
  public static final long DEFAULT_TIMEOUT_MS = 10_000;
  public static final int DEFAULT_MAX_IN_FLIGHT = 128;
  /** No re-sending: a request that a lost node had fails at {@code timeoutMs}. */
  public static final long DEFAULT_RESEND_AFTER_MS = 0;
  /** Vert.x's default {@code clusterPingInterval} plus {@code clusterPingReplyInterval}, 20 s each. */
  public static final long DEFAULT_HELD_AFTER_TIMEOUT_MS = 40_000;
  /** Well above a consumer's normal reply on loopback or a LAN, well below {@code timeoutMs}. */
  public static final long DEFAULT_NODE_LEFT_GRACE_MS = 500;

  private String type = DEFAULT_TYPE;
  private String address = DEFAULT_ADDRESS;
  private long timeoutMs = DEFAULT_TIMEOUT_MS;
  private int maxInFlight = DEFAULT_MAX_IN_FLIGHT;
  private long resendAfterMs = DEFAULT_RESEND_AFTER_MS;
  private long heldAfterTimeoutMs = DEFAULT_HELD_AFTER_TIMEOUT_MS;
  private long nodeLeftGraceMs = DEFAULT_NODE_LEFT_GRACE_MS;

  /** The defaults. */
  public HandlerOptions() {
  }

  /** A copy of {@code other}. */
  public HandlerOptions(HandlerOptions other) {
    HandlerOptionsConverter.fromJson(other.toJson(), this);
  }

  /**
   * Reads the {@code handler} section.
   *
   * @throws IllegalArgumentException naming the key ({@code handler.…}) on an unknown key or a bad value
   */
  public HandlerOptions(JsonObject json) {
    ConfigValues.check(json, "handler.", new HandlerOptions().toJson(), Set.of());
    HandlerOptionsConverter.fromJson(json, this);
  }

  /** These options as JSON, as the JSON constructor reads them. */
  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    HandlerOptionsConverter.toJson(this, json);
    return json;
  }

  /** {@code handler.type}: {@link #ECHO}, {@link #EVENT_BUS} or a {@link RequestHandler} class's name. */
  public String getType() {
    return type;
  }

  /** Which application answers: {@link #ECHO}, {@link #EVENT_BUS} or a {@link RequestHandler} class's name. */
  public HandlerOptions setType(String type) {
    if (!ECHO.equals(type) && !EVENT_BUS.equals(type)) {
      handlerClass(type);
    }
    this.type = type;
    return this;
  }

  /** {@code handler.address}. */
  public String getAddress() {
    return address;
  }

  /** The event-bus address requests are sent to (type {@code eventbus}). */
  public HandlerOptions setAddress(String address) {
    if (address == null || address.isBlank()) {
      throw new IllegalArgumentException("handler.address: must be a non-empty event-bus address");
    }
    this.address = address;
    return this;
  }

  /** {@code handler.timeoutMs}. */
  public long getTimeoutMs() {
    return timeoutMs;
  }

  /** How long an event-bus reply may take before the connection is closed. */
  public HandlerOptions setTimeoutMs(long timeoutMs) {
    this.timeoutMs = ConfigValues.requirePositive("handler.timeoutMs", timeoutMs);
    return this;
  }

  /** {@code handler.maxInFlight}. */
  public int getMaxInFlight() {
    return maxInFlight;
  }

  /** The most answers one connection may await at once before it stops reading. */
  public HandlerOptions setMaxInFlight(int maxInFlight) {
    this.maxInFlight = ConfigValues.requirePositive("handler.maxInFlight", maxInFlight);
    return this;
  }

  /** {@code handler.resendAfterMs}. */
  public long getResendAfterMs() {
    return resendAfterMs;
  }

  /** For idempotent applications only: a request not answered after this long is sent again; 0: never. */
  public HandlerOptions setResendAfterMs(long resendAfterMs) {
    this.resendAfterMs = ConfigValues.requireNonNegative("handler.resendAfterMs", resendAfterMs);
    return this;
  }

  /** {@code handler.heldAfterTimeoutMs}. */
  public long getHeldAfterTimeoutMs() {
    return heldAfterTimeoutMs;
  }

  /**
   * On a clustered Vert.x, how long a request that timed out stays counted in {@code maxBufferedBytes}: set it to
   * {@code EventBusOptions}' {@code clusterPingInterval} + {@code clusterPingReplyInterval} when you change them.
   */
  public HandlerOptions setHeldAfterTimeoutMs(long heldAfterTimeoutMs) {
    this.heldAfterTimeoutMs = ConfigValues.requireNonNegative("handler.heldAfterTimeoutMs", heldAfterTimeoutMs);
    return this;
  }

  /** {@code handler.nodeLeftGraceMs}. */
  public long getNodeLeftGraceMs() {
    return nodeLeftGraceMs;
  }

  /**
   * On a clustered Vert.x, when a node leaves: how long a request in flight then may go unanswered before it fails
   * (or is sent again with {@code resendAfterMs}); above the consumers' slowest normal reply. 0: it waits for
   * {@code timeoutMs}.
   */
  public HandlerOptions setNodeLeftGraceMs(long nodeLeftGraceMs) {
    this.nodeLeftGraceMs = ConfigValues.requireNonNegative("handler.nodeLeftGraceMs", nodeLeftGraceMs);
    return this;
  }

  /**
   * The {@link RequestHandler} class {@code name} names, loaded but not initialised, so that a configuration naming a
   * class that cannot answer is refused when it is read (and by {@code check-config}), not when it is deployed.
   */
  static Class<? extends RequestHandler> handlerClass(String name) {
    if (name == null || !name.contains(".")) {
      throw new IllegalArgumentException("handler.type: " + ConfigValues.quote(name)
        + " is not one of \"echo\", \"eventbus\" or the name of a RequestHandler class");
    }
    try {
      Class<?> type = Class.forName(name, false, HandlerOptions.class.getClassLoader());
      if (!RequestHandler.class.isAssignableFrom(type)) {
        throw new IllegalArgumentException("handler.type: " + name + " does not implement " + RequestHandler.class.getName());
      }
      type.getConstructor();
      return type.asSubclass(RequestHandler.class);
    } catch (ClassNotFoundException e) {
      throw new IllegalArgumentException("handler.type: no class " + name + " on the class path");
    } catch (NoSuchMethodException | LinkageError e) {
      throw new IllegalArgumentException("handler.type: " + name + " needs a public no-argument constructor: " + e, e);
    }
  }
}
