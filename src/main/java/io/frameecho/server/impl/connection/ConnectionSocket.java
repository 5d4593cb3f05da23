package io.frameecho.server.impl.connection;

import io.frameecho.protocol.FrameParser;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;

/** The socket as a {@link Connection} sees it; the only seam to the channel, so that tests can supply their own. */
public interface ConnectionSocket extends FrameParser.Demand {

  /** What the socket tells its connection, on the connection's event loop. */
  interface Events {

    /** Bytes read; the listener owns {@code bytes} and releases it. */
    void bytes(ByteBuf bytes);

    /** The client shut down its sending side (or the read side ended). */
    void inputEnded();

    /** The write queue went below its low-water mark. */
    void writable();

    /** An IO error. */
    void failed(Throwable error);

    /** The server is shutting down: finish gracefully. */
    void shutdownRequested();

    /** The socket is closed, for whatever reason. */
    void closed();

    /** True when the connection owes nothing, so an end of input closes the socket at once; else it stays half-open. */
    default boolean owesNothing() {
      return false;
    }

    /**
     * Memory of the frame under way for the next read of {@code least} bytes to land in, or null for an ordinary read.
     * The read goes to {@link #bytes} next, or is released if it took nothing.
     */
    default ByteBuf readInto(ByteBufAllocator alloc, int least) {
      return null;
    }

    /** Whether the socket may go to a successor process instead of closing: every answer written, nothing dropped. */
    default boolean handOverAllowed() {
      return false;
    }
  }

  /** Stops or starts reading from the kernel; the connection's parser switches it. */
  @Override
  void reading(boolean on);

  /** More than {@code writeQueueMaxSize} bytes wait to be written. */
  boolean writeQueueFull();

  /** Response bytes queued and not yet taken by the kernel. */
  long pendingWriteBytes();

  /** Queues {@code bytes} (released once written); the future tells whether they were. */
  Future<Void> write(ByteBuf bytes);

  /** Queues {@code bytes}, which the caller no longer touches; the future tells whether they were. */
  Future<Void> write(Buffer bytes);

  /** After the queued writes, a FIN; reads are then discarded until the client closes or {@code lingerMs} pass. */
  void closeLingering(long lingerMs);

  /**
   * For a connection owing nothing: a FIN, then reads are discarded until the client closes or {@code lingerMs} pass,
   * so that bytes crossing the FIN are not answered by a reset.
   */
  void closeOwingNothing(long lingerMs);

  /** True once the FIN has gone out after the last response: nothing the connection owed is left. */
  boolean lingering();

  /** Closes at once, dropping whatever is still queued. */
  void closeNow();

  /** True once a close handed the socket to a successor process. */
  default boolean handedOver() {
    return false;
  }

  /** The client reset the connection (known on epoll; false where the transport cannot tell). */
  boolean resetByPeer();

  /** Milliseconds since the kernel last sent the client a byte (epoll's TCP_INFO); -1 where unknown. */
  long msSinceDataSent();

  /** The client closed or reset the connection, even if not read yet (epoll only). */
  boolean clientClosed();
}
