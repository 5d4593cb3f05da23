package io.frameecho.server;

import io.frameecho.protocol.Frames;
import io.vertx.core.json.JsonObject;

import java.util.Map;

/**
 * The server's settings, with their defaults and the one place where they are validated.
 * <p>
 * {@link #FrameEchoOptions(JsonObject)} reads the verticle's {@code config()}: an absent key keeps its
 * default; a value of the wrong type, out of range, or an unknown key throws
 * {@link IllegalArgumentException} naming the key and the reason, so a bad configuration fails at start.
 */
public class FrameEchoOptions {

  public static final String DEFAULT_HOST = "0.0.0.0";
  /** The book's port. */
  public static final int DEFAULT_PORT = 1234;
  public static final int DEFAULT_MAX_FRAME_SIZE = Frames.DEFAULT_MAX_FRAME_SIZE;
  /** High-water mark of a connection's write queue, in bytes: the book's {@code Conn::outgoing}, bounded. */
  public static final int DEFAULT_WRITE_QUEUE_MAX_SIZE = 64 * 1024;

  /** Ports from -65535 to -1 ask for a random port shared by every instance that uses the same value. */
  private static final int MIN_PORT = -65535;
  private static final int MAX_PORT = 65535;

  private String host = DEFAULT_HOST;
  private int port = DEFAULT_PORT;
  private int maxFrameSize = DEFAULT_MAX_FRAME_SIZE;
  private int writeQueueMaxSize = DEFAULT_WRITE_QUEUE_MAX_SIZE;
  private HandlerOptions handler = new HandlerOptions();

  public FrameEchoOptions() {
  }

  public FrameEchoOptions(FrameEchoOptions other) {
    this.host = other.host;
    this.port = other.port;
    this.maxFrameSize = other.maxFrameSize;
    this.writeQueueMaxSize = other.writeQueueMaxSize;
    this.handler = new HandlerOptions(other.handler);
  }

  /**
   * Reads options from JSON, as found in {@code conf/config.json}.
   *
   * @throws IllegalArgumentException naming the key, on an unknown key or a bad value
   */
  public FrameEchoOptions(JsonObject json) {
    for (Map.Entry<String, Object> entry : json) {
      String key = entry.getKey();
      Object value = entry.getValue();
      switch (key) {
        case "host":
          setHost(ConfigValues.string(key, value));
          break;
        case "port":
          setPort(ConfigValues.integer(key, value));
          break;
        case "maxFrameSize":
          setMaxFrameSize(ConfigValues.integer(key, value));
          break;
        case "writeQueueMaxSize":
          setWriteQueueMaxSize(ConfigValues.integer(key, value));
          break;
        case "handler":
          setHandler(new HandlerOptions(ConfigValues.object(key, value)));
          break;
        default:
          throw new IllegalArgumentException("unknown configuration key '" + key + "'; known keys: "
            + "host, port, maxFrameSize, writeQueueMaxSize, handler");
      }
    }
  }

  public JsonObject toJson() {
    return new JsonObject()
      .put("host", host)
      .put("port", port)
      .put("maxFrameSize", maxFrameSize)
      .put("writeQueueMaxSize", writeQueueMaxSize)
      .put("handler", handler.toJson());
  }

  public String getHost() {
    return host;
  }

  /** The address to bind; {@code 0.0.0.0} for every interface. */
  public FrameEchoOptions setHost(String host) {
    if (host == null || host.isBlank()) {
      throw new IllegalArgumentException("host: must be a non-empty host name or address");
    }
    this.host = host;
    return this;
  }

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

  public int getMaxFrameSize() {
    return maxFrameSize;
  }

  /**
   * The largest payload a request may announce, in bytes. A longer header is a protocol error that ends
   * the connection. At most 2 GiB - 1, the largest buffer the JVM can hold.
   */
  public FrameEchoOptions setMaxFrameSize(int maxFrameSize) {
    if (maxFrameSize <= 0) {
      throw new IllegalArgumentException("maxFrameSize: " + maxFrameSize + " must be positive");
    }
    this.maxFrameSize = maxFrameSize;
    return this;
  }

  public int getWriteQueueMaxSize() {
    return writeQueueMaxSize;
  }

  /**
   * Bytes of responses a connection may queue before it stops reading requests; it reads again once the
   * queue has drained to half of this.
   */
  public FrameEchoOptions setWriteQueueMaxSize(int writeQueueMaxSize) {
    if (writeQueueMaxSize <= 0) {
      throw new IllegalArgumentException("writeQueueMaxSize: " + writeQueueMaxSize + " must be positive");
    }
    this.writeQueueMaxSize = writeQueueMaxSize;
    return this;
  }

  public HandlerOptions getHandler() {
    return handler;
  }

  /** Which application answers request frames; see {@link HandlerOptions}. */
  public FrameEchoOptions setHandler(HandlerOptions handler) {
    this.handler = java.util.Objects.requireNonNull(handler, "handler");
    return this;
  }

  @Override
  public String toString() {
    return toJson().encode();
  }
}
