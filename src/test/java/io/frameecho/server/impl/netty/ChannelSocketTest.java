package io.frameecho.server.impl.netty;

import io.frameecho.server.impl.connection.ConnectionSocket;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * One connection's socket on a real channel: reads as Netty buffers, a half-closed client still answered, the
 * lingering close's FIN, and a refusal that sends a FIN rather than a reset.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 30, timeUnit = TimeUnit.SECONDS)
class ChannelSocketTest {

  private NetServer server;
  private final StringBuilder read = new StringBuilder();
  private final CompletableFuture<String> inputEnded = new CompletableFuture<>();
  private final CompletableFuture<Void> closed = new CompletableFuture<>();
  private final CompletableFuture<ConnectionSocket> attached = new CompletableFuture<>();
  private final CompletableFuture<Context> loop = new CompletableFuture<>();

  @AfterEach
  void closeServer() throws Exception {
    if (server != null) {
      server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  private int listen(Vertx vertx, boolean refuse) throws Exception {
    server = vertx.createNetServer().connectHandler(socket -> {
      Context context = Vertx.currentContext();
      loop.complete(context);
      if (refuse) {
        ChannelSocket.refuse(socket, context, 1000);
        return;
      }
      attached.complete(ChannelSocket.accepted(socket, context, 64 * 1024).attach(events(), () -> Integer.MAX_VALUE));
    });
    return server.listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS).actualPort();
  }

  @Test
  void aHalfClosedClientIsAnsweredThenTheCloseLingersUntilItLeaves(Vertx vertx) throws Exception {
    int port = listen(vertx, false);
    try (Socket client = new Socket()) {
      client.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
      client.getOutputStream().write("request".getBytes(StandardCharsets.US_ASCII));
      client.shutdownOutput();
      assertEquals("request", inputEnded.get(10, TimeUnit.SECONDS), "what it sent, then its end");
      ConnectionSocket socket = attached.get(10, TimeUnit.SECONDS);
      CompletableFuture<long[]> queued = new CompletableFuture<>();
      loop.get().runOnContext(v -> {
        queued.complete(new long[] {socket.pendingWriteBytes(), socket.writeQueueFull() ? 1 : 0});
        socket.write(Unpooled.copiedBuffer("answer", StandardCharsets.US_ASCII));
        socket.closeLingering(5_000);
      });
      assertEquals(0, queued.get(10, TimeUnit.SECONDS)[0]);
      assertEquals(0, queued.get()[1]);
      assertEquals("answer", readToEnd(client.getInputStream()), "the answer, then a FIN");
    }
    closed.get(10, TimeUnit.SECONDS);
  }

  @Test
  void aRefusedClientGetsAFinNotAReset(Vertx vertx) throws Exception {
    int port = listen(vertx, true);
    try (Socket client = new Socket()) {
      client.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
      client.getOutputStream().write(new byte[4096]);
      assertEquals("", readToEnd(client.getInputStream()), "an end of stream, not a reset");
    }
    assertFalse(attached.isDone());
  }

  /** Everything until the end of the stream; a reset would throw. */
  private static String readToEnd(InputStream in) throws Exception {
    return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
  }

  private ConnectionSocket.Events events() {
    return new ConnectionSocket.Events() {
      @Override
      public void bytes(ByteBuf bytes) {
        read.append(bytes.toString(StandardCharsets.US_ASCII));
        bytes.release();
      }

      @Override
      public void inputEnded() {
        inputEnded.complete(read.toString());
      }

      @Override
      public void writable() {
      }

      @Override
      public void failed(Throwable error) {
        inputEnded.completeExceptionally(error);
      }

      @Override
      public void shutdownRequested() {
      }

      @Override
      public void closed() {
        closed.complete(null);
      }
    };
  }
}
