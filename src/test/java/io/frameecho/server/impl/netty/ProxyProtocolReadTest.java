package io.frameecho.server.impl.netty;

import io.frameecho.server.impl.connection.ConnectionSocket;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.SocketAddress;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The PROXY protocol header read in front of Vert.x's handler: the client's address it carries, none for a balancer's
 * own check, a failure (and the socket closed) at the first byte that is no header, what follows it passed on.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 30, timeUnit = TimeUnit.SECONDS)
class ProxyProtocolReadTest {

  private static final byte[] V2_SIGNATURE = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};

  /** A channel with a handler named as Vert.x's: what passes it is what the connection would read. */
  private static EmbeddedChannel channel() {
    EmbeddedChannel channel = new EmbeddedChannel();
    channel.pipeline().addLast("handler", new ChannelInboundHandlerAdapter());
    return channel;
  }

  private static ByteBuf ascii(String text) {
    return Unpooled.copiedBuffer(text, StandardCharsets.US_ASCII);
  }

  /** A v2 header: {@code command} (0x21 PROXY, 0x20 LOCAL), {@code family} (0x11 TCP4, 0x12 UDP4), 192.0.2.7:40000. */
  private static byte[] v2(int command, int family) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(V2_SIGNATURE);
    out.write(command);
    out.write(family);
    if (family == 0x00) {
      out.writeBytes(new byte[] {0, 0});
    } else {
      out.writeBytes(new byte[] {0, 12, (byte) 192, 0, 2, 7, 127, 0, 0, 1, (byte) 0x9C, 0x40, 0x04, (byte) 0xD2});
    }
    return out.toByteArray();
  }

  private static Throwable cause(Future<?> future) {
    assertTrue(future.failed(), "failed: " + future);
    return future.cause();
  }

  @Test
  void aV1HeaderCarriesTheClientsAddressAndWhatFollowsItPassesOnWithTheHeadersHandlersGone() {
    EmbeddedChannel channel = channel();
    Future<SocketAddress> header = ProxyProtocol.read(channel);
    assertFalse(header.isComplete());
    channel.writeInbound(ascii("PROXY TCP4 192.0.2.7 127.0.0.1 40000 1234\r\nafter"));
    assertTrue(header.succeeded(), String.valueOf(header.cause()));
    assertEquals("192.0.2.7", header.result().host());
    assertEquals(40000, header.result().port());
    ByteBuf after = channel.readInbound();
    assertEquals("after", after.toString(StandardCharsets.US_ASCII), "the bytes after the header, in the same read");
    after.release();
    assertNull(channel.pipeline().get(ProxyProtocol.DECODER));
    assertNull(channel.pipeline().get(ProxyProtocol.READER));
    assertTrue(channel.isOpen());
    assertFalse(channel.finish());
  }

  @Test
  void aV2HeaderSplitAcrossReadsIsWaitedFor() {
    EmbeddedChannel channel = channel();
    Future<SocketAddress> header = ProxyProtocol.read(channel);
    byte[] bytes = v2(0x21, 0x11);
    channel.writeInbound(Unpooled.wrappedBuffer(Arrays.copyOfRange(bytes, 0, 7)));
    assertFalse(header.isComplete(), "the start of a v2 signature is no failure");
    assertTrue(channel.isOpen());
    channel.writeInbound(Unpooled.wrappedBuffer(Arrays.copyOfRange(bytes, 7, bytes.length)));
    assertTrue(header.succeeded(), String.valueOf(header.cause()));
    assertEquals("192.0.2.7", header.result().host());
    assertEquals(40000, header.result().port());
    assertNull(channel.readInbound(), "nothing followed it");
    assertFalse(channel.finish());
  }

  @Test
  void aBalancersOwnCheckCarriesNoAddress() {
    EmbeddedChannel local = channel();
    Future<SocketAddress> v2Local = ProxyProtocol.read(local);
    local.writeInbound(Unpooled.wrappedBuffer(v2(0x20, 0x00)));
    assertTrue(v2Local.succeeded(), String.valueOf(v2Local.cause()));
    assertNull(v2Local.result(), "LOCAL");
    EmbeddedChannel unknown = channel();
    Future<SocketAddress> v1Unknown = ProxyProtocol.read(unknown);
    unknown.writeInbound(ascii("PROXY UNKNOWN\r\n"));
    assertTrue(v1Unknown.succeeded(), String.valueOf(v1Unknown.cause()));
    assertNull(v1Unknown.result(), "UNKNOWN");
    assertTrue(local.isOpen() && unknown.isOpen());
    assertFalse(local.finish());
    assertFalse(unknown.finish());
  }

  @Test
  void aShortFrameWhereTheHeaderShouldBeFailsAtItsFirstByteAndClosesTheSocket() {
    EmbeddedChannel channel = channel();
    Future<SocketAddress> header = ProxyProtocol.read(channel);
    ByteBuf frame = Unpooled.wrappedBuffer(new byte[] {5, 0, 0, 0, 'h', 'e', 'l', 'l', 'o'});
    channel.writeInbound(frame);
    assertInstanceOf(ProxyProtocol.InvalidHeader.class, cause(header));
    assertTrue(cause(header).getMessage().contains("first bytes are not a PROXY protocol header"), cause(header).getMessage());
    assertFalse(channel.isOpen());
    assertEquals(0, frame.refCnt(), "released, not passed on");
    assertNull(channel.readInbound());
  }

  @Test
  void bytesThatLeaveTheV2SignatureMidwayFailWithoutWaitingForMore() {
    EmbeddedChannel channel = channel();
    Future<SocketAddress> header = ProxyProtocol.read(channel);
    channel.writeInbound(Unpooled.wrappedBuffer(new byte[] {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x00}));
    assertInstanceOf(ProxyProtocol.InvalidHeader.class, cause(header));
    assertFalse(channel.isOpen());
  }

  @Test
  void aMalformedV1LineFailsWithTheDecodersReasonAndClosesTheSocket() {
    EmbeddedChannel channel = channel();
    Future<SocketAddress> header = ProxyProtocol.read(channel);
    channel.writeInbound(ascii("PROXY FOO 1 2 3 4\r\n"));
    assertInstanceOf(ProxyProtocol.InvalidHeader.class, cause(header));
    assertFalse(cause(header).getMessage().isEmpty());
    assertFalse(channel.isOpen());
  }

  @Test
  void aUdpHeaderOnATcpServerIsInvalid() {
    EmbeddedChannel channel = channel();
    Future<SocketAddress> header = ProxyProtocol.read(channel);
    channel.writeInbound(Unpooled.wrappedBuffer(v2(0x21, 0x12)));
    assertInstanceOf(ProxyProtocol.InvalidHeader.class, cause(header));
    assertTrue(cause(header).getMessage().startsWith("a UDP"), cause(header).getMessage());
    assertFalse(channel.isOpen());
  }

  @Test
  void aClientThatLeavesBeforeItsHeaderFailsItAsClosed() {
    EmbeddedChannel channel = channel();
    Future<SocketAddress> header = ProxyProtocol.read(channel);
    channel.writeInbound(ascii("PROXY TCP4 192.0"));
    assertFalse(header.isComplete());
    channel.close();
    assertInstanceOf(ClosedChannelException.class, cause(header));
  }

  @Test
  void aSocketAlreadyClosedOrLeftByVertxIsNotRead() {
    EmbeddedChannel closed = channel();
    closed.close();
    assertInstanceOf(ClosedChannelException.class, cause(ProxyProtocol.read(closed)));
    EmbeddedChannel withoutHandler = new EmbeddedChannel();
    assertInstanceOf(ClosedChannelException.class, cause(ProxyProtocol.read(withoutHandler)));
    assertNull(withoutHandler.pipeline().get(ProxyProtocol.DECODER), "nothing placed");
    assertFalse(withoutHandler.finish());
  }

  @Test
  void onAVertxSocketWhatFollowsTheHeaderIsKeptForTheConnection(Vertx vertx) throws Exception {
    CompletableFuture<String> result = new CompletableFuture<>();
    NetServer server = vertx.createNetServer().connectHandler(socket -> {
      Context context = Vertx.currentContext();
      ProxyProtocol.read(socket).onComplete(header -> {
        if (header.failed()) {
          result.completeExceptionally(header.cause());
          return;
        }
        // Once the read that completed the header has been handed on whole, as a connection would be attached.
        context.runOnContext(v -> {
          StringBuilder kept = new StringBuilder(header.result().host() + "|");
          Sockets.deliverEarlyReads(Sockets.channelOf(socket), bytesTo(kept));
          result.complete(kept.toString());
        });
      });
    });
    try {
      int port = server.listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS).actualPort();
      try (Socket client = new Socket()) {
        client.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
        ByteArrayOutputStream sent = new ByteArrayOutputStream();
        sent.writeBytes(v2(0x21, 0x11));
        sent.writeBytes("after".getBytes(StandardCharsets.US_ASCII));
        client.getOutputStream().write(sent.toByteArray());
        assertEquals("192.0.2.7|after", result.get(10, TimeUnit.SECONDS));
      }
    } finally {
      server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  /** Events that append the bytes read to {@code read}. */
  private static ConnectionSocket.Events bytesTo(StringBuilder read) {
    return new ConnectionSocket.Events() {
      @Override
      public void bytes(ByteBuf bytes) {
        read.append(bytes.toString(StandardCharsets.US_ASCII));
        bytes.release();
      }

      @Override
      public void inputEnded() {
        read.append("|end");
      }

      @Override
      public void writable() {
      }

      @Override
      public void failed(Throwable error) {
        read.append("|failed");
      }

      @Override
      public void shutdownRequested() {
      }

      @Override
      public void closed() {
      }
    };
  }
}
