/**
 * The server behind the {@link io.frameecho.server.FrameEchoServer} facade: {@link
 * io.frameecho.server.impl.FrameEchoServerImpl} accepts sockets on its verticle's event loop, turns each into a
 * {@link io.frameecho.server.impl.connection.Connection}, and drains them on shutdown. <b>Threading rule:</b> a
 * server's state is touched on the event loop it was created on, but for one process-wide flag (the start-up
 * line about Vert.x's internals is logged once). Its sub-packages are split by threading rule: {@code connection}
 * (one event loop), {@code shared} (every cross-thread access), {@code ops} (optional meters and health).
 */
package io.frameecho.server.impl;
