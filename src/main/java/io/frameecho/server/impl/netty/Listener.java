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
 * A server's listening channel (Netty's parent of the sockets it accepted). Vert.x's shutdown first takes the
 * server's event loop out of the listener's round robin, then closes the listener: a connection the listener
 * accepts in between is closed unanswered (Vert.x 5.0 to 5.2), and the kernel's queue of connections not
 * accepted yet is dropped (or, with {@code tcp_migrate_req}, moved to another listener of a reuseport group)
 * only when the listener closes. So the server stops the listener reading first: nothing more is accepted,
 * what the kernel holds stays queued until the close. <b>Threading:</b> its tasks run on the listener's event loop (Vert.x's
 * acceptor), touch only the listening channel, and report back on the server's context.
 */
public final class Listener {

  private final Channel channel;

  Listener(Channel channel) {
    this.channel = channel;
  }

  /** The listening channel {@code socket} was accepted by, or null (a socket with no parent). */
  public static Listener of(NetSocket socket) {
    Channel parent = Sockets.channelOf(socket).parent();
    return parent == null ? null : new Listener(parent);
  }

  /**
   * Stops accepting; the future completes on {@code context} once the listener's event loop has handed every
   * connection it already accepted to its event loop (and those event loops' earlier tasks, which register
   * them, have run).
   */
  public Future<Void> stopAccepting(Context context) {
    Promise<Void> done = Promise.promise();
    channel.eventLoop().execute(() -> {
      channel.config().setAutoRead(false);
      context.runOnContext(v -> done.complete());
    });
    return done.future();
  }

  /**
   * Accepting again, if the listener is still open after Vert.x's shutdown began: other servers share it (another
   * deployment on the same port), and Vert.x keeps it for them.
   */
  public void resumeIfOpen() {
    channel.eventLoop().execute(() -> {
      if (channel.isOpen()) {
        channel.config().setAutoRead(true);
      }
    });
  }

  /**
   * Completes on {@code context} once every listener Vert.x has closed is unbound. Vert.x's close future completes
   * when Netty's does; on NIO the JDK then closes the socket only at its selector's next select, on the listener's
   * event loop (Vert.x's acceptor). Netty moves due scheduled
   * tasks to its queue only before a batch of tasks, after its IO pass, so a task scheduled from that event loop runs
   * after a select; two in a row, after two.
   */
  public static Future<Void> allUnbound(Vertx vertx, Context context) {
    List<EventExecutor> loops = new ArrayList<>();
    ((VertxInternal) vertx).acceptorEventLoopGroup().forEach(loops::add);
    ((VertxInternal) vertx).eventLoopGroup().forEach(loops::add);
    return afterTwoPolls(loops, context);
  }

  /** Completes on {@code context} once each of {@code loops} has run two scheduled tasks in a row. */
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
