package io.frameecho.client;

import io.frameecho.protocol.FrameParser;
import io.frameecho.protocol.FramingException;
import io.frameecho.protocol.LengthField;
import io.vertx.core.Context;
import io.netty.buffer.ByteBuf;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.SocketAddress;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A pipelining client of the frame protocol: responses match requests in order, and a dropped connection or invalid
 * response fails every pending request with a {@link FrameClientException}. Safe from any thread; one thread's
 * requests are sent in call order.
 * <p>
 * The protocol has no "go away" message, so a restarting server may drop a request it never read. Unanswered requests
 * are re-sent only if declared idempotent ({@link #resendIdempotent(boolean)}), so none is sent twice unasked.
 */
public final class FrameClient {

  private static final String REFUSED = "refused by the server: it closed the connection before answering anything "
    + "(at maxConnections or maxConnectionsPerIp, shutting down, expecting TLS, or it could not serve the first request)";

  /** Kept referenced because Vert.x closes an unreachable net client along with its sockets. */
  private final NetClient netClient;
  private final SocketAddress server;
  private final Context context;
  private final int maxFrameSize;
  private final LengthField form;
  /** Replaced on reconnect; on {@link #context} only, as are the fields below. */
  private NetSocket socket;
  /** Requests still owed a response, oldest first. */
  private final ArrayDeque<Pending> pending = new ArrayDeque<>();
  /** While reconnecting, requests queue in {@link #pending} unwritten. */
  private boolean reconnecting;
  /** Reconnect tries since a connection last answered. */
  private int attempts;
  /** When the current series of attempts gives up, as {@link System#nanoTime}. */
  private long deadlineNanos;
  /** Options for the current series, read when it began. */
  private ReconnectOptions series;
  private long retryTimer = -1;
  private long reconnectAttempts;
  private boolean ended;
  private Throwable failure;
  private long sent;
  /** Responses on the current connection; none means the server refused it. */
  private long answeredHere;
  private long resent;
  private volatile boolean resendIdempotent;
  private volatile ReconnectOptions reconnectOptions = ReconnectOptions.DEFAULTS;
  private volatile boolean closing;
  private volatile long requestTimeoutMs;
  private volatile Handler<Void> closeHandler;

  /** A request awaiting its response, kept whole for re-sending. */
  private static final class Pending {
    final Buffer payload;
    final Promise<Buffer> promise;
    boolean written;

    Pending(Buffer payload, Promise<Buffer> promise) {
      this.payload = payload;
      this.promise = promise;
    }
  }

  private FrameClient(NetClient netClient, SocketAddress server, NetSocket socket, Context context, LengthField form,
                      int maxFrameSize) {
    this.form = form;
    this.netClient = netClient;
    this.server = server;
    this.socket = socket;
    this.context = context;
    this.maxFrameSize = maxFrameSize;
  }

  /** Connects with the default 32 MiB frame limit in both directions. */
  public static Future<FrameClient> connect(Vertx vertx, String host, int port) {
    return connect(vertx, host, port, LengthField.DEFAULT_MAX_FRAME_SIZE);
  }

  /** Connects; requests and responses over {@code maxFrameSize} bytes are refused. */
  public static Future<FrameClient> connect(Vertx vertx, String host, int port, int maxFrameSize) {
    return connect(vertx, new NetClientOptions().setTcpNoDelay(true), host, port, maxFrameSize);
  }

  /** Connects with Vert.x client options (TLS, timeouts, proxies and so on). */
  public static Future<FrameClient> connect(Vertx vertx, NetClientOptions netOptions, String host, int port, int maxFrameSize) {
    return connect(vertx, netOptions, SocketAddress.inetSocketAddress(port, host), maxFrameSize);
  }

  /** Connects to {@code server}, a host and port or a unix domain socket. */
  public static Future<FrameClient> connect(Vertx vertx, NetClientOptions netOptions, SocketAddress server, int maxFrameSize) {
    return connect(vertx, netOptions, server, LengthField.DEFAULT, maxFrameSize);
  }

  /** Connects using framing {@code form}; {@code maxFrameSize} bounds message bodies. */
  public static Future<FrameClient> connect(Vertx vertx, NetClientOptions netOptions, SocketAddress server, LengthField form,
                                            int maxFrameSize) {
    java.util.Objects.requireNonNull(form, "form");
    if (maxFrameSize <= 0) {
      return Future.failedFuture(new IllegalArgumentException("maxFrameSize must be positive: " + maxFrameSize));
    }
    NetClient netClient = vertx.createNetClient(netOptions);
    Context context = vertx.getOrCreateContext();
    Promise<FrameClient> connected = Promise.promise();
    // Connect on the client's context so handlers are set before a server close can arrive.
    context.runOnContext(v -> netClient.connect(server).onComplete(ar -> {
      if (ar.failed()) {
        netClient.close();
        connected.fail(ar.cause());
        return;
      }
      FrameClient client = new FrameClient(netClient, server, ar.result(), context, form, maxFrameSize);
      client.start(ar.result());
      connected.complete(client);
    }));
    return connected.future();
  }

  private void start(NetSocket connection) {
    answeredHere = 0;
    Throwable[] error = new Throwable[1];
    FrameParser parser = FrameParser.reading(connection, form, maxFrameSize, new FrameParser.Listener() {
      @Override
      public void frame(ByteBuf frame) {
        onResponse(form.message(frame));
      }

      @Override
      public void failed(Throwable cause) {
        // With re-sending on, a reset or TLS failure counts as an end of stream; an unreadable response still fails.
        if (resendIdempotent && !closing && !(cause instanceof FramingException)) {
          error[0] = cause;
          connection.close();
          return;
        }
        fail(new FrameClientException("connection failed: " + cause.getMessage(), cause));
      }
    });
    connection.closeHandler(v -> {
      parser.releaseBuffers();
      String why = error[0] != null ? "connection failed: " + error[0].getMessage()
        : answeredHere == 0 ? REFUSED : "connection closed by the server";
      if (failure == null && !closing && resendIdempotent && unanswered()) {
        retry(why, error[0]);
      } else {
        end(new FrameClientException(why, error[0]));
      }
    });
  }

  /** Whether any request is still owed a response (timed-out ones are not). */
  private boolean unanswered() {
    for (Pending request : pending) {
      if (!request.promise.future().isComplete()) {
        return true;
      }
    }
    return false;
  }

  /** Schedules the next reconnect after the backoff, clipped to the deadline; past it the requests fail. */
  private void retry(String why, Throwable cause) {
    reconnecting = true;
    long now = System.nanoTime();
    if (attempts == 0) {
      series = reconnectOptions;
      deadlineNanos = now + TimeUnit.MILLISECONDS.toNanos(series.deadlineMs());
    } else if (now - deadlineNanos >= 0) {
      end(new FrameClientException("gave up re-sending after " + attempts + " attempt(s) to reconnect within "
        + series.deadlineMs() + " ms (reconnectOptions); the last failed: " + why, cause));
      return;
    }
    long delayMs = Math.min(series.delayBefore(attempts + 1), TimeUnit.NANOSECONDS.toMillis(deadlineNanos - now));
    if (delayMs <= 0) {
      reconnect(why, cause);
    } else {
      retryTimer = context.owner().setTimer(delayMs, id -> {
        retryTimer = -1;
        reconnect(why, cause);
      });
    }
  }

  /** One reconnect try, re-sending unanswered requests in order. */
  private void reconnect(String why, Throwable cause) {
    if (failure != null) {
      return;
    }
    // Everything left timed out: nothing to re-send.
    if (!unanswered()) {
      end(new FrameClientException(why, cause));
      return;
    }
    attempts++;
    reconnectAttempts++;
    netClient.connect(server).onComplete(ar -> {
      if (failure != null || closing) {
        if (ar.succeeded()) {
          ar.result().close();
        }
        end(new FrameClientException("the client was closed while it reconnected to re-send"));
        return;
      }
      if (ar.failed()) {
        retry("reconnecting failed: " + ar.cause().getMessage(), ar.cause());
        return;
      }
      reconnecting = false;
      socket = ar.result();
      start(socket);
      List<Pending> again = new ArrayList<>(pending);
      pending.clear();
      for (Pending request : again) {
        if (request.promise.future().isComplete()) {
          continue;
        }
        if (request.written) {
          resent++;
        }
        write(request);
      }
    });
  }

  /** Fails requests sent from now on that are not answered within {@code ms} milliseconds; 0 means no limit. */
  public FrameClient requestTimeout(long ms) {
    if (ms < 0) {
      throw new IllegalArgumentException("requestTimeout must be 0 (none) or positive: " + ms);
    }
    this.requestTimeoutMs = ms;
    return this;
  }

  /**
   * Declares requests idempotent, so unanswered ones are re-sent in order on a new connection until the
   * {@link #reconnectOptions(ReconnectOptions)} deadline. Off by default.
   */
  public FrameClient resendIdempotent(boolean idempotent) {
    this.resendIdempotent = idempotent;
    return this;
  }

  /** How to reconnect for {@link #resendIdempotent}; {@link ReconnectOptions#DEFAULTS} unless set. */
  public FrameClient reconnectOptions(ReconnectOptions options) {
    this.reconnectOptions = java.util.Objects.requireNonNull(options, "options");
    return this;
  }

  /** Called once when the connection is closed, by either side; pending requests have failed by then. */
  public FrameClient closeHandler(Handler<Void> handler) {
    this.closeHandler = handler;
    return this;
  }

  /**
   * Sends one request frame.
   *
   * @return the response payload, or a failure if the connection ends first
   */
  public Future<Buffer> request(Buffer payload) {
    if ((form.stripHeader() ? payload.length() : payload.length() - form.headerSize()) > maxFrameSize) {
      return Future.failedFuture(new IllegalArgumentException(
        "request of " + payload.length() + " bytes exceeds maxFrameSize " + maxFrameSize));
    }
    if (!form.fits(payload.length())) {
      return Future.failedFuture(new IllegalArgumentException(
        "a request of " + payload.length() + " bytes cannot be framed as " + form));
    }
    Promise<Buffer> promise = Promise.promise();
    if (Vertx.currentContext() == context) {
      send(payload, promise);
    } else {
      context.runOnContext(v -> send(payload, promise));
    }
    return promise.future();
  }

  private void send(Buffer payload, Promise<Buffer> promise) {
    if (failure != null) {
      promise.fail(failure);
      return;
    }
    sent++;
    long timeoutMs = requestTimeoutMs;
    if (timeoutMs > 0) {
      Vertx vertx = context.owner();
      long timer = vertx.setTimer(timeoutMs, id -> promise.tryFail(
        new FrameClientException("no response within " + timeoutMs + " ms (requestTimeout)")));
      promise.future().onComplete(ar -> vertx.cancelTimer(timer));
    }
    write(new Pending(payload, promise));
  }

  /** Queues {@code request} and writes it unless reconnecting. */
  private void write(Pending request) {
    pending.add(request);
    if (!reconnecting) {
      request.written = true;
      socket.write(form.header(request.payload));
      socket.write(form.body(request.payload));
    }
  }

  private void onResponse(Buffer payload) {
    Pending request = pending.poll();
    if (request == null) {
      fail(new FrameClientException("protocol error: the server sent a response to no request"));
      socket.close();
      return;
    }
    answeredHere++;
    attempts = 0;
    // A timed-out request has already failed; its late response is dropped.
    request.promise.tryComplete(payload);
  }

  /** Ends the client for good: fails its requests and calls {@link #closeHandler} once. */
  private void end(FrameClientException error) {
    reconnecting = false;
    if (retryTimer != -1) {
      context.owner().cancelTimer(retryTimer);
      retryTimer = -1;
    }
    fail(error);
    Handler<Void> handler = closeHandler;
    if (!ended && handler != null) {
      handler.handle(null);
    }
    ended = true;
  }

  private void fail(FrameClientException error) {
    if (failure == null) {
      failure = error;
      socket.close();
    }
    Pending request;
    while ((request = pending.poll()) != null) {
      request.promise.tryFail(failure);
    }
  }

  /** Requests sent so far; a re-sent request counts once. */
  public long requestsSent() {
    return sent;
  }

  /** Re-sends on new connections ({@link #resendIdempotent}). */
  public long requestsResent() {
    return resent;
  }

  /** Reconnect tries so far ({@link #resendIdempotent}), failed or not. */
  public long reconnectAttempts() {
    return reconnectAttempts;
  }

  /** Closes the connection; pending requests fail. */
  public Future<Void> close() {
    closing = true;
    context.runOnContext(v -> {
      if (retryTimer != -1) {
        end(new FrameClientException("the client was closed while it waited to reconnect to re-send"));
      }
    });
    return netClient.close();
  }
}
