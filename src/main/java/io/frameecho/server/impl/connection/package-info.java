/**
 * One client connection, the book's {@code Conn}, in rooms: {@link io.frameecho.server.impl.connection.Connection}
 * ({@code want_close}), the read gate ({@code want_read}), the answers and the response writer ({@code handle_write}),
 * and the clocks. It meets its socket through one seam, {@link io.frameecho.server.impl.connection.ConnectionSocket}
 * (the channel's is in {@code server.impl.netty}; tests give it their own), and touches no Netty or Vert.x internals.
 * <b>Threading rule:</b> everything here runs on the connection's own event loop: no locks, no atomics, no volatile
 * fields. What reaches a connection from elsewhere (the budget's wake-ups, an answer completed) is run on that loop
 * first.
 */
package io.frameecho.server.impl.connection;
