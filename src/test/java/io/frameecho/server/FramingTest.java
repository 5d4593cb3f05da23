package io.frameecho.server;

import io.frameecho.client.FrameClient;
import io.frameecho.protocol.FrameStream;
import io.frameecho.protocol.LengthField;
import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.RecordingMetrics;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.SocketAddress;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The server and {@link FrameClient} in a form other than frame-echo's own, read from the configuration's {@code framing}. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 30, timeUnit = TimeUnit.SECONDS)
class FramingTest {

  /** The protocol error a test causes logs a WARN line; captured, it stays off the console. */
  @RegisterExtension
  final LogCapture connectionLog = LogCapture.of("io.frameecho.server.impl.Connection");

  /** A 2-byte big-endian length that counts its own header. */
  private static final JsonObject INCLUDES_HEADER = new JsonObject()
    .put("framing", new JsonObject().put("lengthFieldLength", 2).put("byteOrder", "BIG_ENDIAN").put("lengthAdjustment", -2));

  private static Future<FrameEchoServer> server(Vertx vertx, JsonObject config, RequestHandler handler, FrameEchoMetrics metrics) {
    FrameEchoOptions options = new FrameEchoOptions(config.copy().put("host", "127.0.0.1").put("port", 0).put("maxFrameSize", 1000));
    FrameEchoServer server = FrameEchoServer.create(vertx, options).metrics(metrics);
    if (handler != null) {
      server.requestHandler(handler);
    }
    return server.listen();
  }

  @Test
  void theEchoAnswersEachFrameOfTheConfiguredFormWhateverTheCutsOfTheWrites(Vertx vertx, VertxTestContext ctx) {
    LengthField form = new FrameEchoOptions(INCLUDES_HEADER).getFraming();
    List<Buffer> requests = List.of(Buffer.buffer("hello"), Buffer.buffer(), Buffer.buffer("x".repeat(300)), Buffer.buffer());
    Buffer stream = Buffer.buffer();
    requests.forEach(r -> stream.appendBuffer(form.frame(r)));
    List<Buffer> answers = new ArrayList<>();
    Promise<Void> all = Promise.promise();
    NetClient client = vertx.createNetClient();
    server(vertx, INCLUDES_HEADER, null, FrameEchoMetrics.NONE)
      .compose(server -> client.connect(server.actualPort(), "127.0.0.1"))
      .onComplete(ctx.succeeding(socket -> {
        FrameStream.newParser(form, 1000, socket).handler(answer -> {
          answers.add(answer);
          if (answers.size() == requests.size()) {
            all.tryComplete();
          }
        }).endHandler(v -> all.tryFail("the connection ended after " + answers.size() + " of " + requests.size() + " answers"));
        for (int i = 0; i < stream.length(); i++) {
          socket.write(stream.getBuffer(i, i + 1));
        }
      }));
    // The client is held until the answers came: one the garbage collector finds unreferenced, Vert.x closes.
    all.future().eventually(client::close).onComplete(ctx.succeeding(v -> ctx.verify(() -> {
      assertEquals(requests, answers);
      ctx.completeNow();
    })));
  }

  @Test
  void anApplicationsAnswersAreFramedInTheFormByServerAndClient(Vertx vertx, VertxTestContext ctx) {
    LengthField form = new FrameEchoOptions(INCLUDES_HEADER).getFraming();
    server(vertx, INCLUDES_HEADER, request -> Future.succeededFuture(Buffer.buffer(request.toString().toUpperCase())),
      FrameEchoMetrics.NONE)
      .compose(server -> FrameClient.connect(vertx, new NetClientOptions(), SocketAddress.inetSocketAddress(server.actualPort(),
        "127.0.0.1"), form, 1000))
      .compose(client -> Future.all(client.request(Buffer.buffer("abc")), client.request(Buffer.buffer()))
        .map(all -> all.<Buffer>list()).eventually(client::close))
      .onComplete(ctx.succeeding(answers -> ctx.verify(() -> {
        assertEquals(List.of(Buffer.buffer("ABC"), Buffer.buffer()), answers);
        ctx.completeNow();
      })));
  }

  @Test
  void aKeptHeaderIsTheHandlersToReadAndToAnswerWith(Vertx vertx, VertxTestContext ctx) {
    // A type byte, then a 2-byte little-endian length of the body; the handler sees and answers whole frames.
    JsonObject config = new JsonObject().put("framing", new JsonObject().put("lengthFieldOffset", 1).put("lengthFieldLength", 2)
      .put("byteOrder", "LITTLE_ENDIAN").put("stripHeader", false));
    LengthField form = new FrameEchoOptions(config).getFraming();
    List<Buffer> seen = new ArrayList<>();
    server(vertx, config, request -> {
      seen.add(request);
      // The answer: type 2, the body reversed; its length field is set by the server.
      StringBuilder body = new StringBuilder(request.getString(3, request.length())).reverse();
      return Future.succeededFuture(Buffer.buffer(new byte[] {2, 0, 0}).appendString(body.toString()));
    }, FrameEchoMetrics.NONE)
      .compose(server -> FrameClient.connect(vertx, new NetClientOptions(), SocketAddress.inetSocketAddress(server.actualPort(),
        "127.0.0.1"), form, 1000))
      .compose(client -> client.request(Buffer.buffer(new byte[] {1, 0, 0}).appendString("abc")).eventually(client::close))
      .onComplete(ctx.succeeding(answer -> ctx.verify(() -> {
        assertEquals(List.of(Buffer.buffer(new byte[] {1, 3, 0}).appendString("abc")), seen);
        assertEquals(Buffer.buffer(new byte[] {2, 3, 0}).appendString("cba"), answer);
        ctx.completeNow();
      })));
  }

  @Test
  void anAnswerCarriesItsRequestsBytesBeforeTheLengthFieldAsTheEchoDoes(Vertx vertx, VertxTestContext ctx) {
    // A type byte, then a 2-byte big-endian length of the body; the handler sees and answers bodies only.
    JsonObject config = new JsonObject().put("framing", new JsonObject().put("lengthFieldOffset", 1).put("lengthFieldLength", 2)
      .put("byteOrder", "BIG_ENDIAN"));
    NetClient client = vertx.createNetClient();
    server(vertx, config, request -> Future.succeededFuture(Buffer.buffer(new StringBuilder(request.toString()).reverse().toString())),
      FrameEchoMetrics.NONE)
      .compose(server -> client.connect(server.actualPort(), "127.0.0.1"))
      .compose(socket -> {
        Promise<Buffer> answers = Promise.promise();
        Buffer received = Buffer.buffer();
        socket.handler(bytes -> {
          received.appendBuffer(bytes);
          if (received.length() == 12) {
            answers.tryComplete(received);
          }
        });
        socket.write(Buffer.buffer(new byte[] {7, 0, 3}).appendString("abc").appendBytes(new byte[] {9, 0, 3}).appendString("xyz"));
        return answers.future();
      })
      .eventually(client::close)
      .onComplete(ctx.succeeding(answers -> ctx.verify(() -> {
        assertEquals(Buffer.buffer(new byte[] {7, 0, 3}).appendString("cba").appendBytes(new byte[] {9, 0, 3}).appendString("zyx"), answers);
        ctx.completeNow();
      })));
  }

  @Test
  void aLengthShorterThanTheHeaderItCountsIsAProtocolErrorAfterTheEarlierAnswers(Vertx vertx, VertxTestContext ctx) {
    RecordingMetrics metrics = new RecordingMetrics();
    List<Buffer> answers = new ArrayList<>();
    NetClient client = vertx.createNetClient();
    server(vertx, INCLUDES_HEADER, null, metrics)
      .compose(server -> client.connect(server.actualPort(), "127.0.0.1"))
      .compose(socket -> {
        Promise<Void> ended = Promise.promise();
        FrameStream frames = FrameStream.newParser(new FrameEchoOptions(INCLUDES_HEADER).getFraming(), 1000, socket);
        frames.handler(answers::add).endHandler(ended::complete);
        socket.write(Buffer.buffer(new byte[] {0, 3, 'a', 0, 1}));
        return ended.future().compose(v -> metrics.closed(CloseReason.PROTOCOL_ERROR));
      })
      .eventually(client::close)
      .onComplete(ctx.succeeding(v -> ctx.verify(() -> {
        assertEquals(List.of(Buffer.buffer("a")), answers);
        assertEquals(1, metrics.protocolErrors());
        ctx.completeNow();
      })));
  }

  @Test
  void aBadFramingFailsAtStartNamingItsKey() {
    IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
      () -> new FrameEchoOptions(new JsonObject().put("framing", new JsonObject().put("lengthFieldLength", 5))));
    assertEquals("framing.lengthFieldLength: 5 must be 1, 2, 3, 4 or 8 (bytes)", e.getMessage());
  }
}
