/**
 * The implementation of {@code io.frameecho.server.FrameEchoServer}:
 * {@link io.frameecho.server.impl.FrameEchoServerImpl} listens, shuts down and closes;
 * {@link io.frameecho.server.impl.Admission} serves each accepted socket, lets it wait for a connection to give way,
 * or turns it away; {@link io.frameecho.server.impl.Drain} counts how shutdown's connections ended;
 * {@link io.frameecho.server.impl.StartupChecks} checks the options before binding and says what start-up must say;
 * {@link io.frameecho.server.impl.Readiness} answers readiness.
 * <b>Threading rule:</b> a server's state is touched on the event loop it was created on, but for process-wide flags
 * (the start-up lines logged once per process); readiness is asked from any thread, and reads the server's
 * connections on that event loop. Its sub-packages are split by threading rule: {@code connection}
 * (one event loop), {@code netty} (the only code that touches Netty's or Vert.x's internals), {@code shared} (every
 * cross-thread access), {@code ops} (optional meters and health).
 */
package io.frameecho.server.impl;
