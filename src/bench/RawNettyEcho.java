// A reference for src/bench/compare.sh (REFS=1): the frame echo in raw Netty 4.2, taken literally. One event loop
// (epoll where it loads, NIO elsewhere) accepts and serves every connection; a frame (4-byte little-endian length,
// then the payload) is echoed, header and all, once the whole of it has arrived. No limits, no timers, no meters:
// what a connection costs Netty itself, with Netty's defaults (TCP_NODELAY on, the kernel's backlog). Netty's own cumulator (ByteToMessageDecoder) gathers partial frames.
//
//   java -cp target/frame-echo.jar src/bench/RawNettyEcho.java PORT
//
// The runnable jar holds Netty; no other dependency. Frames over 32 MiB (the book's k_max_msg) close the connection.

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.ByteToMessageDecoder;

import java.net.InetSocketAddress;
import java.util.List;

public final class RawNettyEcho {

  static final int HEADER = 4;
  static final long MAX_PAYLOAD = 32 << 20;

  /** Echoes every whole frame of what has arrived; flushes once per read, as the loop's reads end. */
  static final class Echo extends ByteToMessageDecoder {
    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
      while (in.readableBytes() >= HEADER) {
        long length = in.getUnsignedIntLE(in.readerIndex());
        if (length > MAX_PAYLOAD) {
          in.skipBytes(in.readableBytes());
          ctx.close();
          return;
        }
        if (in.readableBytes() < HEADER + length) {
          return;
        }
        ctx.write(in.readRetainedSlice(HEADER + (int) length), ctx.voidPromise());
      }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
      ctx.flush();
      super.channelReadComplete(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }

  public static void main(String[] args) throws Exception {
    int port = args.length > 0 ? Integer.parseInt(args[0]) : 1236;
    boolean epoll = Epoll.isAvailable();
    EventLoopGroup loop = new MultiThreadIoEventLoopGroup(1, epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    Class<? extends ServerChannel> channel = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    Channel server = new ServerBootstrap().group(loop, loop).channel(channel)
      .childHandler(new ChannelInitializer<Channel>() {
        @Override
        protected void initChannel(Channel ch) {
          ch.pipeline().addLast(new Echo());
        }
      })
      .bind(port).sync().channel();
    System.out.println("raw Netty echo on port " + ((InetSocketAddress) server.localAddress()).getPort() + " (" + (epoll ? "epoll" : "nio") + ", one event loop)");
    server.closeFuture().sync();
  }
}
