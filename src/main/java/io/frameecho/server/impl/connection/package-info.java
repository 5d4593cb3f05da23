/**
 * One client connection, the book's {@code Conn}, in rooms: {@link io.frameecho.server.impl.connection.Connection}
 * ({@code want_close}), the socket's adapter ({@code handle_read}), the read gate ({@code want_read}), the
 * answers and the response writer ({@code handle_write}), and the clocks. <b>Threading rule:</b> everything here
 * runs on the connection's own event loop: no locks, no atomics, no volatile fields. What reaches a connection
 * from elsewhere (the budget's wake-ups, an answer completed) is run on that loop first. The one exception is
 * {@link io.frameecho.server.impl.connection.ChannelAdapter.Listener}: its tasks run on the listener's (acceptor's)
 * event loop, touch only the listening channel, and report back on the server's context.
 */
package io.frameecho.server.impl.connection;
