package io.frameecho.server.impl.connection;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;

/**
 * What a {@link Connection} does to its socket: the seam where it meets the channel. The channel's socket
 * ({@code server.impl.netty.ChannelSocket}) is one; unit tests give a connection one of their own, and drive its
 * {@link Events} by hand.
 */
public interface ConnectionSocket {

  /** What the socket tells its connection; all on the connection's event loop, inside its context. */
  interface Events {

    /** Bytes read; the listener owns {@code bytes} and releases it. */
    void bytes(ByteBuf bytes);

    /** The client shut down its sending side (or the read side ended). */
    void inputEnded();

    /** The write queue went below its low-water mark. */
    void writable();

    /** An IO error (a reset, a TLS failure, ...). */
    void failed(Throwable error);

    /** Vert.x is shutting its server down: finish gracefully. */
    void shutdownRequested();

    /** The socket is closed, for whatever reason. */
    void closed();

    /**
     * Whether the connection owes its client nothing now (see {@code Connection.owesNothing}): an end of input then
     * closes the socket at once, as a plain Netty server's does. False keeps the socket half-open at an end of input
     * until the connection has answered.
     */
    default boolean owesNothing() {
      return false;
    }

    /**
     * Where the socket's next read may land, from {@code alloc}, when it would take {@code least} bytes: memory of the
     * frame under way (see {@code FrameParser.landingFor}), or null for an ordinary read. The read is handed to
     * {@link #bytes} next, or released if it took nothing.
     */
    default ByteBuf readInto(ByteBufAllocator alloc, int least) {
      return null;
    }

    /**
     * Whether the socket may move to a successor process instead of closing (a restart with handover): the connection
     * closes for shutdown, every answer written, and nothing its client sent was read and dropped.
     */
    default boolean handOverAllowed() {
      return false;
    }
  }

  /** The book's {@code want_read} reaching the socket: reading from the kernel stops and starts. */
  void reading(boolean on);

  /** The book's {@code Conn::outgoing} over its limit: more than {@code writeQueueMaxSize} bytes wait. */
  boolean writeQueueFull();

  /** Response bytes queued and not yet taken by the kernel: falls while the client reads, however slowly. */
  long pendingWriteBytes();

  /** Queues {@code bytes} (released once written); the future tells whether they were. */
  Future<Void> write(ByteBuf bytes);

  /** Queues {@code bytes}, which the caller no longer touches; the future tells whether they were. */
  Future<Void> write(Buffer bytes);

  /** Once every queued response is written: a FIN, then reads are discarded until the client closes, or {@code lingerMs}. */
  void closeLingering(long lingerMs);

  /**
   * For a connection that owes nothing (every response handed to the kernel): a FIN, then what the client sends is
   * read and discarded until it closes its side or {@code lingerMs} have passed (with 0, once what it had already
   * sent is read, at the event loop's next turn). What crossed the FIN is seen, not answered by a reset.
   */
  void closeOwingNothing(long lingerMs);

  /** True once the FIN has gone out after the last response: nothing the connection owed is left. */
  boolean lingering();

  /** Closes at once, dropping whatever is still queued. */
  void closeNow();

  /** True once a close moved the socket to a successor process, its client none the wiser (see {@code closeLingering}). */
  default boolean handedOver() {
    return false;
  }

  /** The client reset the connection (known on epoll; false where the transport cannot tell). */
  boolean resetByPeer();

  /**
   * Milliseconds since the kernel last sent the client a byte (epoll's TCP_INFO); -1 where the transport cannot tell.
   * With responses queued, it grows while the client reads nothing, and between a slow reader's window updates.
   */
  long msSinceDataSent();

  /** The client closed its side, or reset the connection, whether or not the server has read that yet (epoll only). */
  boolean clientClosed();
}
