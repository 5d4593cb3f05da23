package io.frameecho.client;

import io.frameecho.protocol.FrameParser;
import io.frameecho.protocol.Frames;
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
 */
public final class FrameClient {

  /** Held, not just used: Vert.x closes a net client, with its sockets, once it is unreachable. */
  private final NetClient netClient;
  private final NetSocket socket;
  private final Context context;
  private final int maxFrameSize;
  /** Responses still owed by the server, oldest first; touched on {@link #context} only. */
  private final ArrayDeque<Promise<Buffer>> pending = new ArrayDeque<>();
  private Throwable failure;
  private long sent;
  private long answered;
  private volatile long requestTimeoutMs;
  private volatile Handler<Void> closeHandler;

  private FrameClient(NetClient netClient, NetSocket socket, Context context, int maxFrameSize) {
    this.netClient = netClient;
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
    if (maxFrameSize <= 0) {
      return Future.failedFuture(new IllegalArgumentException("maxFrameSize must be positive: " + maxFrameSize));
    }
    NetClient netClient = vertx.createNetClient(netOptions);
    return netClient
      .connect(server)
      .<FrameClient>map(socket -> {
        FrameClient client = new FrameClient(netClient, socket, vertx.getOrCreateContext(), maxFrameSize);
        client.start();
        return client;
      })
      .onFailure(err -> netClient.close());
  }

  private void start() {
    FrameParser parser = FrameParser.reading(socket, maxFrameSize, new FrameParser.Listener() {
      @Override
      public void frame(ByteBuf frame) {
        onResponse(Frames.payload(frame));
      }

      @Override
      public void failed(Throwable error) {
        fail(new FrameClientException("connection failed: " + error.getMessage(), error));
      }
    });
    socket.closeHandler(v -> {
      parser.releaseBuffers();
      fail(new FrameClientException(answered == 0
        ? "refused by the server: it closed the connection before answering anything (at maxConnections or "
          + "maxConnectionsPerIp, shutting down, expecting TLS, or it could not serve the first request)"
        : "connection closed by the server"));
      Handler<Void> handler = closeHandler;
      if (handler != null) {
        handler.handle(null);
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
    if (payload.length() > maxFrameSize) {
      return Future.failedFuture(new IllegalArgumentException(
        "request of " + payload.length() + " bytes exceeds maxFrameSize " + maxFrameSize));
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
    pending.add(promise);
    sent++;
    long timeoutMs = requestTimeoutMs;
    if (timeoutMs > 0) {
      Vertx vertx = context.owner();
      long timer = vertx.setTimer(timeoutMs, id -> promise.tryFail(
        new FrameClientException("no response within " + timeoutMs + " ms (requestTimeout)")));
      promise.future().onComplete(ar -> vertx.cancelTimer(timer));
    }
    socket.write(Frames.header(payload.length()));
    socket.write(payload);
  }

  private void onResponse(Buffer payload) {
    Promise<Buffer> promise = pending.poll();
    if (promise == null) {
      fail(new FrameClientException("protocol error: the server sent a response to no request"));
      socket.close();
      return;
    }
    answered++;
    // A request that timed out has failed already: its late response is dropped.
    promise.tryComplete(payload);
  }

  private void fail(FrameClientException error) {
    if (failure == null) {
      failure = error;
      socket.close();
    }
    Promise<Buffer> promise;
    while ((promise = pending.poll()) != null) {
      promise.tryFail(failure);
    }
  }

  /** Requests sent so far. */
  public long requestsSent() {
    return sent;
  }

  /** Closes the connection; pending requests fail. */
  public Future<Void> close() {
    return netClient.close();
  }
}
