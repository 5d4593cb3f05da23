package io.frameecho.server.impl.ops;

import io.vertx.core.Promise;
import io.vertx.core.Context;
import io.frameecho.server.MetricsOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerOptions;

/** The HTTP endpoint for {@code /metrics}, {@code /health/live} and {@code /health/ready} (503 once draining). */
public final class OperationsEndpoint {

  private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

  private OperationsEndpoint() {
  }

  /** Listens on the metrics address, with {@code reusePort} so a replacing process can bind the same port. */
  public static Future<HttpServer> start(Vertx vertx, MetricsOptions options, boolean reusePort, Operations operations) {
    return vertx.createHttpServer(new HttpServerOptions().setHost(options.getHost()).setPort(options.getPort()).setReusePort(reusePort))
      .requestHandler(request -> handle(request, operations))
      .listen();
  }

  private static void handle(HttpServerRequest request, Operations operations) {
    if (request.method() != HttpMethod.GET && request.method() != HttpMethod.HEAD) {
      request.response().setStatusCode(405).end();
      return;
    }
    switch (request.path()) {
      case "/metrics": {
        String text = operations.scrape();
        if (text == null) {
          request.response().setStatusCode(404).end("no Prometheus registry: frame-echo's meters go to another kind (see the WARN line at start)\n");
        } else {
          request.response().putHeader("Content-Type", PROMETHEUS_TEXT).end(text);
        }
        break;
      }
      case "/health/live":
        json(request, 200, "UP");
        break;
      case "/health/ready":
        operations.ready().onComplete(ready -> json(request, ready.result() ? 200 : 503, ready.result() ? "UP" : "DOWN"));
        break;
      default:
        request.response().setStatusCode(404).end();
    }
  }

  private static void json(HttpServerRequest request, int status, String state) {
    request.response().setStatusCode(status).putHeader("Content-Type", "application/json")
      .end("{\"status\":\"" + state + "\"}\n");
  }

  /**
   * Opens the endpoint on the {@link Operations#openEndpointOn} context, or else on {@code context}. The port is
   * returned on {@code context}, because a NetServer the caller listens with elsewhere belongs to no deployment and
   * Vert.x closes it at once on SIGTERM.
   */
  public static Future<Integer> open(Vertx vertx, Context context, MetricsOptions options, boolean reusePort,
                                     Operations operations) {
    Context endpoint = Operations.endpointContext(vertx);
    if (endpoint == null) {
      return start(vertx, options, reusePort, operations).map(http -> http.actualPort());
    }
    Promise<Integer> opened = Promise.promise();
    endpoint.runOnContext(v -> start(endpoint.owner(), options, reusePort, operations)
      .map(http -> http.actualPort()).onComplete(ar -> context.runOnContext(back -> opened.handle(ar))));
    return opened.future();
  }
}
