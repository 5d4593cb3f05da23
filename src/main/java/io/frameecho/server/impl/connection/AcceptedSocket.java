package io.frameecho.server.impl.connection;

import io.vertx.core.net.SocketAddress;

import java.util.function.IntSupplier;

/**
 * A socket accepted for a {@link Connection} and not attached to it yet. {@link Connection#accept} attaches the
 * connection's events, starts the connection, then asks for what was read before it started, in that order: nothing
 * the client sent is lost or handed over out of order.
 */
public interface AcceptedSocket {

  /** The client's address. */
  SocketAddress remoteAddress();

  /**
   * Sends the socket's events to {@code events} from now on; its reads take at most what {@code readCap} says (asked
   * only for reads larger than a small one). Once, on the socket's event loop.
   */
  ConnectionSocket attach(ConnectionSocket.Events events, IntSupplier readCap);

  /**
   * Hands {@code events} what was read before {@link #attach} (during a TLS handshake, or while the socket waited for
   * a slot), then the end of the input if it came then: once, after the connection has started.
   */
  void deliverEarlyReads(ConnectionSocket.Events events);
}
