package io.frameecho.testkit;

import io.frameecho.protocol.FrameParser;
import io.frameecho.protocol.LengthField;
import io.netty.buffer.ByteBuf;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetSocket;

import java.util.ArrayList;
import java.util.List;

/**
 * A test client that writes raw bytes (well-formed or not) and collects the frames the server sends
 * back, so tests can play hostile or careless clients.
 */
public final class RawConnection {

  private final NetClient netClient;
  private final NetSocket socket;
  private final FrameParser responses;
  private final List<Buffer> received = new ArrayList<>();
  private final Promise<Void> closed = Promise.promise();
  private Handler<Buffer> frameConsumer;
  private int expected = -1;
  private Promise<List<Buffer>> expectation;

  private RawConnection(NetClient netClient, NetSocket socket) {
    this.netClient = netClient;
    this.socket = socket;
    this.responses = FrameParser.reading(socket, Integer.MAX_VALUE, new FrameParser.Listener() {
      @Override
      public void frame(ByteBuf whole) {
        Buffer frame = LengthField.DEFAULT.message(whole);
        if (frameConsumer != null) {
          frameConsumer.handle(frame);
          return;
        }
        received.add(frame);
        checkExpectation();
      }

      @Override
      public void failed(Throwable error) {
        // the close handler reports what matters to a test
      }
    });
    socket.closeHandler(v -> {
      responses.releaseBuffers();
      closed.tryComplete();
      if (expectation != null) {
        expectation.tryFail("connection closed after " + received.size() + " of " + expected + " responses");
      }
    });
  }

  public static Future<RawConnection> open(Vertx vertx, int port) {
    return open(vertx, port, new NetClientOptions());
  }

  public static Future<RawConnection> open(Vertx vertx, int port, NetClientOptions options) {
    NetClient client = vertx.createNetClient(options);
    // Connected on the event loop, the socket gets its handlers in the turn its connection completes in (as FrameClient).
    io.vertx.core.Promise<RawConnection> opened = io.vertx.core.Promise.promise();
    vertx.getOrCreateContext().runOnContext(v -> client.connect(port, "127.0.0.1")
      .map(socket -> new RawConnection(client, socket))
      .onFailure(err -> client.close())
      .onComplete(opened));
    return opened.future();
  }

  public NetSocket socket() {
    return socket;
  }

  /** Hands each response frame to {@code consumer} instead of keeping it (for streams too big to keep). */
  public void onFrame(Handler<Buffer> consumer) {
    this.frameConsumer = consumer;
  }

  public Future<Void> write(Buffer bytes) {
    return socket.write(bytes);
  }

  /** Writes each byte in a write of its own, the next only once the previous one was flushed. */
  public Future<Void> writeOneByteAtATime(Buffer bytes) {
    Future<Void> chain = Future.succeededFuture();
    for (int i = 0; i < bytes.length(); i++) {
      Buffer one = bytes.getBuffer(i, i + 1);
      chain = chain.compose(v -> socket.write(one));
    }
    return chain;
  }

  /** Shuts down this side's sending half (TCP FIN): the server sees the end of input and may still write. */
  public void shutdownOutput() {
    ((io.netty.channel.socket.DuplexChannel) channel()).shutdownOutput();
  }

  /**
   * Stops reading responses: they pile up in the server's write queue and the kernel's buffers. The
   * channel itself stops reading (paused through the socket alone, Vert.x would go on reading into a
   * queue of its own).
   */
  public void stopReading() {
    responses.pause();
    channel().config().setAutoRead(false);
  }

  public void startReading() {
    channel().config().setAutoRead(true);
    responses.resume();
  }

  private io.netty.channel.Channel channel() {
    return ((io.vertx.core.internal.net.NetSocketInternal) socket).channelHandlerContext().channel();
  }

  /** Completes with the first {@code n} frames received, or fails if the connection closes first. */
  public Future<List<Buffer>> expectFrames(int n) {
    expected = n;
    expectation = Promise.promise();
    checkExpectation();
    if (closed.future().isComplete()) {
      expectation.tryFail("connection closed after " + received.size() + " of " + n + " responses");
    }
    return expectation.future();
  }

  private void checkExpectation() {
    if (expectation != null && received.size() >= expected) {
      expectation.tryComplete(new ArrayList<>(received.subList(0, expected)));
    }
  }

  public List<Buffer> received() {
    return received;
  }

  /** Completes when the server (or this side) closes the connection. */
  public Future<Void> closed() {
    return closed.future();
  }

  public Future<Void> close() {
    return netClient.close();
  }
}
