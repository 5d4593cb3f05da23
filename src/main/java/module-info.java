/**
 * frame-echo: a framed TCP echo server as a Vert.x 5 verticle and an embeddable library. An embedder uses the
 * exported packages: {@code server} (the server, its verticle, options, request handler, metrics, close reasons),
 * {@code client} and {@code protocol} (the framing codec). The rest is implementation, and the runnable jar's
 * launcher, command line and load generator, whose dependencies are optional ({@code requires static}). Vert.x's
 * {@code io.vertx.core.internal} packages (exported to every module as Vert.x's unsupported internal API) are the only
 * internals imported: the compiler refuses any package Vert.x or Netty does not export. On the module path, the epoll
 * workaround needs {@code --add-opens io.netty.transport.classes.epoll/io.netty.channel.epoll=io.frameecho}.
 */
module io.frameecho {
  requires transitive io.vertx.core;
  requires transitive io.netty.buffer;
  requires io.netty.codec;
  requires io.netty.common;
  requires io.netty.handler;
  requires io.netty.transport;
  requires org.slf4j;
  requires java.management;
  requires jdk.management;

  requires static io.netty.codec.haproxy;
  requires static io.vertx.codegen.api;
  requires static io.vertx.codegen.json;
  requires static io.netty.transport.classes.epoll;
  requires static io.netty.transport.unix.common;
  requires static io.vertx.launcher.application;
  requires static io.vertx.metrics.micrometer;
  requires static micrometer.core;
  requires static micrometer.registry.prometheus;
  requires static info.picocli;
  requires static HdrHistogram;
  requires static jdk.unsupported;

  exports io.frameecho.server;
  exports io.frameecho.client;
  exports io.frameecho.protocol;

  opens io.frameecho.cli to info.picocli;
}
