package io.frameecho.testkit;

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.transport.Transport;

/**
 * A Vert.x with one event loop, on epoll where it is available (as the jar runs on Linux), NIO elsewhere: every
 * server connection of a test then shares that loop, so one client's answer means the loop has polled every socket.
 */
public final class OneEventLoop {

  private OneEventLoop() {
  }

  public static Vertx vertx() {
    return Vertx.builder().with(new VertxOptions().setEventLoopPoolSize(1))
      .withTransport(Transport.EPOLL.available() ? Transport.EPOLL : Transport.NIO).build();
  }
}
