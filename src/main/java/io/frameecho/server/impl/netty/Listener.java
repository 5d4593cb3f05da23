package io.frameecho.server.impl.netty;

import io.netty.channel.Channel;
import io.netty.util.concurrent.EventExecutor;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.net.NetSocket;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A server's listening channel. Vert.x's shutdown removes the server from the accept round robin before closing the
 * listener, and closes connections accepted in between unanswered; stopping the listener's reads first leaves pending
 * connections queued in the kernel instead. Runs on the listener's event loop and reports on the server's context.
 */
public final class Listener {

  private final Channel channel;

  Listener(Channel channel) {
    this.channel = channel;
  }

  /** The listener that accepted {@code socket}, or null. */
  public static Listener of(NetSocket socket) {
    Channel parent = Sockets.channelOf(socket).parent();
    return parent == null ? null : new Listener(parent);
  }

  /** Stops accepting; completes on {@code context} once already accepted connections are registered. */
  public Future<Void> stopAccepting(Context context) {
    Promise<Void> done = Promise.promise();
    channel.eventLoop().execute(() -> {
      channel.config().setAutoRead(false);
      context.runOnContext(v -> done.complete());
    });
    return done.future();
  }

  /** Resumes accepting if the listener is still open, as when another deployment shares it. */
  public void resumeIfOpen() {
    channel.eventLoop().execute(() -> {
      if (channel.isOpen()) {
        channel.config().setAutoRead(true);
      }
    });
  }

  /**
   * Completes on {@code context} once every closed listener is unbound. On NIO the JDK closes the socket only at the
   * next select, and Netty runs a scheduled task only after an IO pass, so two chained tasks on each loop suffice.
   */
  public static Future<Void> allUnbound(Vertx vertx, Context context) {
    List<EventExecutor> loops = new ArrayList<>();
    ((VertxInternal) vertx).acceptorEventLoopGroup().forEach(loops::add);
    ((VertxInternal) vertx).eventLoopGroup().forEach(loops::add);
    return afterTwoPolls(loops, context);
  }

  /** Completes on {@code context} after two chained scheduled tasks on each loop. */
  static Future<Void> afterTwoPolls(Iterable<EventExecutor> loops, Context context) {
    List<Future<Void>> done = new ArrayList<>();
    for (EventExecutor loop : loops) {
      Promise<Void> polled = Promise.promise();
      loop.execute(() -> loop.schedule(() -> loop.schedule(() -> context.runOnContext(v -> polled.complete()),
        0, TimeUnit.MILLISECONDS), 0, TimeUnit.MILLISECONDS));
      done.add(polled.future());
    }
    return Future.all(done).mapEmpty();
  }
}
