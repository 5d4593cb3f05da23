package io.frameecho.client;

import io.frameecho.protocol.FrameParser;
import io.frameecho.protocol.FramingException;
import io.frameecho.protocol.Frames;
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
 * A pipelining client of the frame protocol: the book's {@code send_req}/{@code read_res} with futures.
 * <p>
 * {@link #request(Buffer)} writes a frame at once and returns a future of its response; responses are
 * matched to requests in order, so any number may be in flight. When the connection drops or the server
 * sends what cannot be a response, every pending future fails with a {@link FrameClientException}; when the
 * server closes before answering anything (as frame-echo refuses a client over its connection limits), the
 * failure says "refused". With {@link #requestTimeout(long)}, a request not answered in time fails alone:
 * its late response is read and dropped, and the connection goes on.
 * Safe to call from any thread: requests are sent in the order the calls were made from one thread.
 * <p>
 * A server that restarts, or closes a connection it thinks idle, ends the stream gracefully (a FIN), possibly
 * with a request of yours on the way that it never read: the protocol has no "go away" message. When your requests
 * are idempotent, say so with {@link #resendIdempotent(boolean)}: when the server then closes or resets a connection
 * with requests unanswered, the client reconnects, trying again with growing waits while the server restarts
 * ({@link #reconnectOptions(ReconnectOptions)}), and re-sends them in order on each new connection. Without it, a
 * close or a reset fails them: a request the server may have read is not sent twice unasked.
 */
public final class FrameClient {

  /** Why requests fail when the server closed their connection before answering anything, as frame-echo refuses one. */
  private static final String REFUSED = "refused by the server: it closed the connection before answering anything "
    + "(at maxConnections or maxConnectionsPerIp, shutting down, expecting TLS, or it could not serve the first request)";

  /** Held, not just used: Vert.x closes a net client, with its sockets, once it is unreachable. */
  private final NetClient netClient;
  private final SocketAddress server;
  private final Context context;
  private final int maxFrameSize;
  /** The frames' header form. */
  private final LengthField form;
  /** The connection now; replaced when the client reconnects to re-send. Touched on {@link #context} only. */
  private NetSocket socket;
  /** Requests whose responses are still owed, oldest first; touched on {@link #context} only. */
  private final ArrayDeque<Pending> pending = new ArrayDeque<>();
  /** The connection ended and a new one is being opened, or waited for: requests wait in {@link #pending}, unwritten. */
  private boolean reconnecting;
  /** Tries to reconnect since a connection last answered: 0 when none is under way. */
  private int attempts;
  /** When the series of tries must stop ({@link System#nanoTime}). */
  private long deadlineNanos;
  /** The options the series of tries runs by, read when it began. */
  private ReconnectOptions series;
  /** The wait before the next try, or -1. */
  private long retryTimer = -1;
  private long reconnectAttempts;
  /** {@link #closeHandler} has been told. */
  private boolean ended;
  private Throwable failure;
  private long sent;
  private long answered;
  /** Responses on the connection now: none means the server closed it before answering anything. */
  private long answeredHere;
  private long resent;
  private volatile boolean resendIdempotent;
  private volatile ReconnectOptions reconnectOptions = ReconnectOptions.DEFAULTS;
  private volatile boolean closing;
  private volatile long requestTimeoutMs;
  private volatile Handler<Void> closeHandler;

  /** One request awaiting its response: kept whole, to be re-sent. */
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

  /** Connects with the book's 32 MiB limit on frames in both directions. */
  public static Future<FrameClient> connect(Vertx vertx, String host, int port) {
    return connect(vertx, host, port, Frames.DEFAULT_MAX_FRAME_SIZE);
  }

  /** Connects; requests and responses longer than {@code maxFrameSize} bytes are refused. */
  public static Future<FrameClient> connect(Vertx vertx, String host, int port, int maxFrameSize) {
    return connect(vertx, new NetClientOptions().setTcpNoDelay(true), host, port, maxFrameSize);
  }

  /**
   * Connects with Vert.x's own client options: TLS ({@code setSsl(true)} and trust options), timeouts,
   * proxies and so on.
   */
  public static Future<FrameClient> connect(Vertx vertx, NetClientOptions netOptions, String host, int port, int maxFrameSize) {
    return connect(vertx, netOptions, SocketAddress.inetSocketAddress(port, host), maxFrameSize);
  }

  /**
   * Connects to {@code server}: a host and port ({@link SocketAddress#inetSocketAddress}), or a unix domain socket
   * ({@link SocketAddress#domainSocketAddress}), which Vert.x reaches with its epoll or io_uring transport, or with
   * NIO on JDK 16 and later.
   */
  public static Future<FrameClient> connect(Vertx vertx, NetClientOptions netOptions, SocketAddress server, int maxFrameSize) {
    return connect(vertx, netOptions, server, LengthField.DEFAULT, maxFrameSize);
  }

  /**
   * Connects to a server of frames in {@code form} (its {@code framing}); requests are messages as the form delivers
   * them (with the header when it is kept), and so are responses; {@code maxFrameSize} bounds their bodies.
   */
  public static Future<FrameClient> connect(Vertx vertx, NetClientOptions netOptions, SocketAddress server, LengthField form,
                                            int maxFrameSize) {
    java.util.Objects.requireNonNull(form, "form");
    if (maxFrameSize <= 0) {
      return Future.failedFuture(new IllegalArgumentException("maxFrameSize must be positive: " + maxFrameSize));
    }
    NetClient netClient = vertx.createNetClient(netOptions);
    Context context = vertx.getOrCreateContext();
    Promise<FrameClient> connected = Promise.promise();
    // Connected from the client's own event loop, the socket gets its handlers in the turn its connection completes
    // in; from another thread, a turn later, and a server's close in between reached a socket with no close handler.
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
        // With re-sending on, a reset or a TLS failure ends the connection as an end of stream does: the application
        // said a request may be answered twice. A response the client cannot read is the server's fault: it fails.
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

  /** Whether a request is still owed a response (one that timed out is not). */
  private boolean unanswered() {
    for (Pending request : pending) {
      if (!request.promise.future().isComplete()) {
        return true;
      }
    }
    return false;
  }

  /**
   * The connection ended, for {@code why}, with requests unanswered, or a try to reconnect failed: the next try, at
   * once when this begins a series, else after the options' wait, clipped to the series' deadline; past it, the
   * requests fail.
   */
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

  /** One try: a new connection, on which the requests left unanswered are re-sent in order. */
  private void reconnect(String why, Throwable cause) {
    if (failure != null) {
      return;
    }
    // Every request left has timed out meanwhile: nothing to re-send, so the connection's end stands.
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
        // A request that timed out has failed already: not sent again.
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

  /**
   * Fails each request not answered within {@code ms} milliseconds (0, the default: no limit) with a
   * {@link FrameClientException}. Its response, when it comes, is read and dropped: later requests still get
   * their own. Applies to requests sent from now on.
   */
  public FrameClient requestTimeout(long ms) {
    if (ms < 0) {
      throw new IllegalArgumentException("requestTimeout must be 0 (none) or positive: " + ms);
    }
    this.requestTimeoutMs = ms;
    return this;
  }

  /**
   * {@code true}: the application's requests are idempotent (answering one twice does no harm), so those left
   * unanswered when the server closes or resets the connection (a restart, an idle close) are re-sent, in order, on a
   * new connection, once on each; the client tries to reconnect as {@link #reconnectOptions(ReconnectOptions)} says,
   * and the requests fail, with the last reason and the number of tries, only when its deadline has passed. A
   * connection that ends with nothing unanswered is not replaced: {@link #closeHandler} is told. Off by default: the
   * requests fail with the connection.
   */
  public FrameClient resendIdempotent(boolean idempotent) {
    this.resendIdempotent = idempotent;
    return this;
  }

  /**
   * How to reconnect to re-send ({@link #resendIdempotent}): {@link ReconnectOptions#DEFAULTS} unless set. Applies to
   * the next connection that ends.
   */
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

  /** Queues {@code request} and writes it, unless a new connection is being opened (it is written then). */
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
    answered++;
    answeredHere++;
    // The connection serves: a later end begins a new series of tries.
    attempts = 0;
    // A request that timed out has failed already: its late response is dropped.
    request.promise.tryComplete(payload);
  }

  /** The client's last connection is gone for good: its requests fail, and {@link #closeHandler} is told once. */
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

  /** Requests sent so far (a re-sent request counts once). */
  public long requestsSent() {
    return sent;
  }

  /** Requests re-sent on a new connection ({@link #resendIdempotent}): once for each connection a request went on again. */
  public long requestsResent() {
    return resent;
  }

  /** Tries to reconnect to re-send so far ({@link #resendIdempotent}), failed or not. */
  public long reconnectAttempts() {
    return reconnectAttempts;
  }

  /** Closes the connection; pending requests fail, as they do while the client waits to reconnect. */
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
