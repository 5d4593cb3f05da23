/**
 * One client connection and its parts, reaching its socket only through
 * {@link io.frameecho.server.impl.connection.ConnectionSocket}. Everything here runs on the connection's event loop,
 * without locks; what arrives from elsewhere (a completed answer, a budget wake-up) is first run on that loop.
 */
package io.frameecho.server.impl.connection;
