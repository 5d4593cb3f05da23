package io.frameecho.example;

import io.frameecho.client.FrameClient;
import io.frameecho.protocol.FrameStream;
import io.frameecho.protocol.LengthField;
import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.FrameEchoServer;
import io.frameecho.server.FrameEchoVerticle;
import io.frameecho.server.HandlerOptions;
import io.frameecho.server.RequestHandler;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.PfxOptions;
import io.vertx.core.net.ServerSSLOptions;
import io.vertx.core.net.SocketAddress;

import java.nio.ByteOrder;

/**
 * The Java code of the docs (README.md, src/docs/EMBEDDING.md), compiled: each region between {@code tag::NAME[]}
 * and {@code end::NAME[]} is quoted in a page, and {@code DocSnippetsTest} checks that the page's copy is this text.
 * {@code EmbeddingExamplesTest} runs every method against a real server. Each method returns what its snippet
 * makes, so that the test can look at it; the snippets themselves are what an application would write.
 */
public final class EmbeddingExamples {

  private EmbeddingExamples() {
  }

  /** The verticle, deployed with a JSON config as a configuration file would give it; completes with its port. */
  public static Future<Integer> deployWithConfig(Vertx vertx) {
    // tag::deploy-config[]
    FrameEchoVerticle verticle = new FrameEchoVerticle();
    JsonObject config = new JsonObject().put("port", 0).put("maxConnections", 1_000);   // port 0: a free port
    return vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(config))
      .map(id -> verticle.actualPort());
    // end::deploy-config[]
  }

  /** Typed options with Vert.x's own types: a PKCS12 key store and mutual TLS. */
  public static Future<Integer> deployMutualTls(Vertx vertx, String serverP12, String clientsP12, String password) {
    // tag::deploy-mutual-tls[]
    FrameEchoOptions options = new FrameEchoOptions().setPort(0).setNetServerOptions(new NetServerOptions()
      .setSsl(true)
      .setKeyCertOptions(new PfxOptions().setPath(serverP12).setPassword(password))
      .setClientAuth(ClientAuth.REQUIRED)
      .setTrustOptions(new PfxOptions().setPath(clientsP12).setPassword(password)));
    FrameEchoVerticle verticle = new FrameEchoVerticle(options);
    return vertx.deployVerticle(verticle).map(id -> verticle.actualPort());
    // end::deploy-mutual-tls[]
  }

  /** By class name, N instances on one port, as the launcher deploys it and as HA redeploys it. */
  public static Future<String> deployByName(Vertx vertx, int port) {
    // tag::deploy-by-name[]
    return vertx.deployVerticle("io.frameecho.server.FrameEchoVerticle",
      new DeploymentOptions().setConfig(new JsonObject().put("port", port)).setInstances(2));
    // end::deploy-by-name[]
  }

  /**
   * Typed options and N instances: a supplier, since Vert.x deploys one object once ("Same deployable supplied more
   * than once" otherwise). On port 0 the instances share one free port.
   */
  public static Future<String> deployInstances(Vertx vertx, RequestHandler handler) {
    // tag::deploy-instances[]
    FrameEchoOptions options = new FrameEchoOptions().setPort(0).setMaxConnections(1_000);
    return vertx.deployVerticle(() -> new FrameEchoVerticle(options, handler), new DeploymentOptions().setInstances(2));
    // end::deploy-instances[]
  }

  /** Application logic behind the frame protocol, deployed as a verticle. */
  public static Future<Integer> deployUpperCase(Vertx vertx) {
    // tag::request-handler[]
    RequestHandler upperCase = request -> Future.succeededFuture(Buffer.buffer(request.toString().toUpperCase()));
    FrameEchoVerticle verticle = new FrameEchoVerticle(new FrameEchoOptions().setPort(0), upperCase);
    return vertx.deployVerticle(verticle).map(id -> verticle.actualPort());
    // end::request-handler[]
  }

  /** The facade, inside a verticle of the application's own: the server is the application's to stop. */
  public static Future<FrameEchoServer> listen(Vertx vertx, RequestHandler handler) {
    // tag::server-facade[]
    return FrameEchoServer.create(vertx, new FrameEchoOptions().setHost("127.0.0.1").setPort(0))
      .requestHandler(handler)
      .listen()
      .onSuccess(server -> System.out.println("frame-echo on port " + server.actualPort()));
    // end::server-facade[]
  }

  /** A server on a unix domain socket, and the client library over it: one request and its response. */
  public static Future<Buffer> unixSocketEcho(Vertx vertx, String socketPath) {
    // tag::unix-socket[]
    FrameEchoVerticle verticle = new FrameEchoVerticle(new FrameEchoOptions().setUnixSocket(socketPath));
    return vertx.deployVerticle(verticle)
      .compose(id -> FrameClient.connect(vertx, new NetClientOptions(), SocketAddress.domainSocketAddress(socketPath),
        FrameEchoOptions.DEFAULT_MAX_FRAME_SIZE))
      .compose(client -> client.request(Buffer.buffer("over a unix socket")).eventually(client::close));
    // end::unix-socket[]
  }

  /**
   * A server that adopts a predecessor's connections at {@code handoverSocket} and hands its own to a successor there
   * when it shuts down; completes with its port.
   */
  public static Future<Integer> deployWithHandover(Vertx vertx, String handoverSocket) {
    // tag::handover[]
    FrameEchoOptions options = new FrameEchoOptions().setPort(0)   // the same fixed port in each process, in practice
      .setNetServerOptions(new NetServerOptions().setReusePort(true))
      .setHandoverSocket(handoverSocket);
    FrameEchoVerticle verticle = new FrameEchoVerticle(options);
    return vertx.deployVerticle(verticle).map(id -> verticle.actualPort());
    // end::handover[]
  }

  /** Requests go to consumers of an event-bus address, on any node of a cluster. */
  public static Future<Integer> deployEventBusHandler(Vertx vertx) {
    // tag::eventbus-handler[]
    FrameEchoOptions options = new FrameEchoOptions().setPort(0)
      .setHandler(new HandlerOptions().setType("eventbus").setAddress("frame-echo.requests"));
    vertx.eventBus().<Buffer>consumer("frame-echo.requests", message -> message.reply(message.body()));
    FrameEchoVerticle verticle = new FrameEchoVerticle(options);
    return vertx.deployVerticle(verticle).map(id -> verticle.actualPort());
    // end::eventbus-handler[]
  }

  /** A new certificate for new handshakes; open connections keep theirs. */
  public static Future<Void> rotate(FrameEchoServer server, String newServerP12, String password) {
    // tag::rotate-certificate[]
    return server.updateTls(new ServerSSLOptions()
      .setKeyCertOptions(new PfxOptions().setPath(newServerP12).setPassword(password)));
    // end::rotate-certificate[]
  }

  /** The client library: one request, its response, and the connection closed. */
  public static Future<Buffer> firstEcho(Vertx vertx, int port) {
    // tag::client[]
    return FrameClient.connect(vertx, "127.0.0.1", port)
      .compose(client -> client.request(Buffer.buffer("hello")).eventually(client::close));
    // end::client[]
  }

  /** The client over mutual TLS: trust the server's certificate, present the client's own. */
  public static Future<Buffer> tlsEcho(Vertx vertx, int port, String trustP12, String clientP12, String password) {
    // tag::tls-client[]
    NetClientOptions tls = new NetClientOptions().setSsl(true).setHostnameVerificationAlgorithm("HTTPS")
      .setTrustOptions(new PfxOptions().setPath(trustP12).setPassword(password))
      .setKeyCertOptions(new PfxOptions().setPath(clientP12).setPassword(password));
    return FrameClient.connect(vertx, tls, "127.0.0.1", port, FrameEchoOptions.DEFAULT_MAX_FRAME_SIZE)
      .compose(client -> client.request(Buffer.buffer("over TLS")).eventually(client::close));
    // end::tls-client[]
  }

  /**
   * A client of a 2-byte big-endian protocol on a plain Vert.x {@code NetSocket}: the public parser reads the answers,
   * {@link LengthField#frame} writes the request.
   */
  public static Future<Buffer> shortBigEndianClient(Vertx vertx, int port) {
    // tag::length-field-client[]
    LengthField form = LengthField.of(2, ByteOrder.BIG_ENDIAN);   // a 2-byte big-endian length, then the body
    NetClient client = vertx.createNetClient();                   // held until closed: unreferenced, the GC closes it
    return client.connect(port, "127.0.0.1").compose(socket -> {
      Promise<Buffer> answer = Promise.promise();
      FrameStream.newParser(form, 65_535, socket)                  // a ReadStream<Buffer> of bodies
        .handler(answer::tryComplete)
        .exceptionHandler(answer::tryFail)
        .endHandler(v -> answer.tryFail("the connection ended before an answer"));
      socket.write(form.frame(Buffer.buffer("ping")));            // header + body
      return answer.future();
    }).eventually(client::close);                                 // closes the socket too
    // end::length-field-client[]
  }

  /** A server of a protocol whose length counts its header, from a configuration file; completes with its port. */
  public static Future<Integer> lengthIncludesHeaderServer(Vertx vertx, String configFile, int port) {
    // tag::length-includes-header-server[]
    FrameEchoVerticle verticle = new FrameEchoVerticle();
    return vertx.fileSystem().readFile(configFile)          // conf/length-includes-header.json
      .map(file -> file.toJsonObject().put("port", port))
      .compose(config -> vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(config)))
      .map(id -> verticle.actualPort());
    // end::length-includes-header-server[]
  }
}
