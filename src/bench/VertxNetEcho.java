// A reference for src/bench/compare.sh (REFS=1): the frame echo on Vert.x's public API, taken literally: a NetServer
// and a RecordParser per connection, one event loop (native epoll where it loads). A frame (4-byte little-endian
// length, then the payload) is echoed, header and all, once the whole of it has arrived. No limits, no timers, no
// meters: what a connection costs Vert.x itself. RecordParser cannot ask for a record of length zero, so an empty
// frame is echoed on its header.
//
//   java -cp target/frame-echo.jar src/bench/VertxNetEcho.java PORT
//
// The runnable jar holds Vert.x; no other dependency. Frames over 32 MiB (the book's k_max_msg) close the connection.

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;
import io.vertx.core.parsetools.RecordParser;
import io.vertx.core.transport.Transport;

public final class VertxNetEcho {

  static final int HEADER = 4;
  static final long MAX_PAYLOAD = 32 << 20;

  /** One connection: header mode (4 bytes), then body mode (the announced length), and back. */
  static void serve(NetSocket socket) {
    RecordParser parser = RecordParser.newFixed(HEADER);
    long[] length = {-1};
    parser.handler(record -> {
      if (length[0] < 0) {
        long announced = record.getUnsignedIntLE(0);
        if (announced > MAX_PAYLOAD) {
          socket.close();
        } else if (announced == 0) {
          socket.write(record);
        } else {
          length[0] = announced;
          parser.fixedSizeMode((int) announced);
        }
      } else {
        socket.write(Buffer.buffer(HEADER + record.length()).appendIntLE(record.length()).appendBuffer(record));
        length[0] = -1;
        parser.fixedSizeMode(HEADER);
      }
    });
    socket.handler(parser);
  }

  public static void main(String[] args) throws Exception {
    int port = args.length > 0 ? Integer.parseInt(args[0]) : 1237;
    Transport transport = Transport.EPOLL.available() ? Transport.EPOLL : Transport.NIO;
    Vertx vertx = Vertx.builder().with(new VertxOptions().setEventLoopPoolSize(1)).withTransport(transport).build();
    NetServer server = vertx.createNetServer().connectHandler(VertxNetEcho::serve);
    server.listen(port).toCompletionStage().toCompletableFuture().get();
    System.out.println("Vert.x NetServer echo on port " + server.actualPort() + " (" + transport.name().toLowerCase() + ", one event loop)");
  }
}
