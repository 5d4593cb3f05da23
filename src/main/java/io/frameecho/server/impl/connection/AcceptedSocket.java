package io.frameecho.server.impl.connection;

import io.vertx.core.net.SocketAddress;

import java.util.function.IntSupplier;

/**
 * A socket accepted and not yet attached to a {@link Connection}. It is attached, the connection started, and only
 * then the early reads delivered, so that no byte is lost or reordered.
 */
public interface AcceptedSocket {

  /** The client's address. */
  SocketAddress remoteAddress();

  /** Sends the socket's events to {@code events}, capping reads at {@code readCap}; once, on the event loop. */
  ConnectionSocket attach(ConnectionSocket.Events events, IntSupplier readCap);

  /** Hands {@code events} what was read before {@link #attach}, then any end of input; once, after the start. */
  void deliverEarlyReads(ConnectionSocket.Events events);
}
