package io.frameecho.server.impl.netty;

import io.frameecho.server.impl.shared.Ticker;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.vertx.core.net.NetSocket;

import java.util.ArrayDeque;

/**
 * Accepted sockets that found every slot of {@code maxConnections} taken, held unread ({@code autoRead} off) until the
 * event loop has polled its sockets once more; then each is decided: a connection may give way to it. A connection's
 * quiet time runs from the last read the loop processed: while the loop lags (a flood of connects queues thousands of
 * accepts ahead of its next poll), an active client's next request can sit unread in the kernel, and its connection
 * would look idle. The decision runs from a timer, and Netty runs a timer that falls due only in a batch of tasks after
 * a poll of its sockets: by then such a request has been read, and a connection still quiet since before the socket
 * arrived really was quiet. A timer decides only the sockets that were waiting when it was set: one that arrives after
 * may come in the batch that runs the timer, before any poll, and waits for the next timer.
 * <p>
 * A held socket's reads (io_uring reads anyway) are kept for its connection ({@link Sockets#keepEarlyReads}), and so
 * is an end of input; a reset closes it quietly, and a socket closed while it waited is never decided. On the server's
 * event loop only.
 */
public final class WaitingSockets {

  /** Decides for a socket that waited, open and reading again, from {@code ip}, that arrived at {@code arrivedNanos}. */
  public interface Decision {
    /** Serves {@code socket} or turns it away; {@code arrivedNanos} is on the {@link Ticker}'s clock. */
    void decide(NetSocket socket, String ip, long arrivedNanos);
  }

  /** Pipeline name of the handler watching a held socket's input. */
  static final String HELD = "frame-echo-held";

  private record Waiting(NetSocket socket, String ip, long arrivedNanos) {
  }

  private final Ticker ticker;
  private final Decision decision;
  private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
  /** The pending timer's id; -1 when none is set. */
  private long timer = -1;
  /** How many of those waiting (the first ones) arrived before the pending timer was set. */
  private int covered;

  /** Sockets decided by {@code decision}, after the loop's next poll, on {@code ticker}'s timers. */
  public WaitingSockets(Ticker ticker, Decision decision) {
    this.ticker = ticker;
    this.decision = decision;
  }

  /** How many wait now. */
  public int size() {
    return waiting.size();
  }

  /** Holds {@code socket}, from {@code ip}, until its decision; call from the connect handler, before Netty's first read. */
  public void add(NetSocket socket, String ip) {
    Channel channel = Sockets.channelOf(socket);
    hold(channel);
    Sockets.readNettyBuffers(Sockets.internal(socket), Sockets.keepEarlyReads(channel));
    socket.exceptionHandler(e -> {
    });
    waiting.add(new Waiting(socket, ip, ticker.nanoTime()));
    if (timer < 0) {
      setTimer();
    }
  }

  /** Holds the channel: no reads, half-closure allowed, end of input watched. */
  static void hold(Channel channel) {
    channel.config().setAutoRead(false);
    channel.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
    // Must run while registered: after an input shutdown the change would fail and Netty would close the socket.
    EpollProbe.FOUND.forServer(channel);
    channel.pipeline().addBefore("handler", HELD, new ChannelInboundHandlerAdapter() {
      @Override
      public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof ChannelInputShutdownEvent) {
          ctx.channel().attr(Sockets.INPUT_ENDED).set(Boolean.TRUE);
        }
        super.userEventTriggered(ctx, evt);
      }
    });
  }

  /** Lets a held channel go: it reads again unless its input has ended. */
  static void readAgain(Channel channel) {
    if (channel.pipeline().get(HELD) != null) {
      channel.pipeline().remove(HELD);
    }
    if (!Sockets.inputEnded(channel)) {
      channel.config().setAutoRead(true);
    }
  }

  private void setTimer() {
    covered = waiting.size();
    // Vert.x's shortest timer: what matters is that it runs after a poll, not how soon.
    timer = ticker.schedule(1, () -> {
      timer = -1;
      // In arrival order; those who came after the timer was set wait for one of their own.
      for (int n = covered; n > 0; n--) {
        release(waiting.poll(), decision);
      }
      if (!waiting.isEmpty()) {
        setTimer();
      }
    });
  }

  /** A socket still open reads again and goes to {@code to}; one whose client left held no slot and is dropped. */
  private static void release(Waiting w, Decision to) {
    Channel channel = Sockets.channelOf(w.socket());
    if (channel.isOpen()) {
      readAgain(channel);
      to.decide(w.socket(), w.ip(), w.arrivedNanos());
    }
  }

  /** The server is stopping: each socket still waiting goes to {@code instead}, none is decided here. */
  public void turnAway(Decision instead) {
    clear().forEach(w -> release(w, instead));
  }

  /** The server is closing: Vert.x closes the waiting sockets with the others; none is decided for afterwards. */
  public void forget() {
    clear();
  }

  private ArrayDeque<Waiting> clear() {
    if (timer >= 0) {
      ticker.cancel(timer);
      timer = -1;
    }
    ArrayDeque<Waiting> all = waiting.clone();
    waiting.clear();
    return all;
  }
}
