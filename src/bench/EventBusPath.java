// The event-bus handler's path against a local RequestHandler, for src/bench/eventbus_path.sh: one frame-echo on PORT,
// answering each request with its payload upper-cased (the jar's UpperCaseConsumer), either
//   local     in a RequestHandler whose future is complete at once, or
//   eventbus  through the event-bus handler to the UpperCaseConsumer deployed in the same Vert.x.
// (The clustered case is the jar itself: -cluster, with the consumer on another node.)
//
//   java -cp target/frame-echo.jar src/bench/EventBusPath.java MODE PORT

import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.FrameEchoVerticle;
import io.frameecho.server.HandlerOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;

public final class EventBusPath {

  static Buffer upperCase(Buffer payload) {
    byte[] bytes = payload.getBytes();
    for (int i = 0; i < bytes.length; i++) {
      if (bytes[i] >= 'a' && bytes[i] <= 'z') {
        bytes[i] -= 'a' - 'A';
      }
    }
    return Buffer.buffer(bytes);
  }

  public static void main(String[] args) {
    String mode = args[0];
    int port = Integer.parseInt(args[1]);
    Vertx vertx = Vertx.vertx();
    FrameEchoOptions options = new FrameEchoOptions().setHost("127.0.0.1").setPort(port);
    Future<String> deployed = switch (mode) {
      case "local" -> vertx.deployVerticle(new FrameEchoVerticle(options, request -> Future.succeededFuture(upperCase(request))));
      case "eventbus" -> vertx.deployVerticle("io.frameecho.example.UpperCaseConsumer")
        .compose(id -> vertx.deployVerticle(new FrameEchoVerticle(options.setHandler(
          new HandlerOptions().setType(HandlerOptions.EVENT_BUS)))));
      default -> throw new IllegalArgumentException("MODE is local or eventbus, not " + mode);
    };
    deployed.onFailure(e -> {
      e.printStackTrace();
      System.exit(1);
    });
  }
}
