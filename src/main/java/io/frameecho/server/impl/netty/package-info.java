/**
 * The only code that touches Netty's or Vert.x's internals ({@code io.vertx.core.internal}, Netty's channels under a
 * Vert.x socket, the epoll transport's private API, reflection), one class per job: the socket a connection talks
 * to ({@link io.frameecho.server.impl.netty.ChannelSocket}), held newcomers and the reads before a socket is attached
 * ({@link io.frameecho.server.impl.netty.HeldNewcomers}), the TLS upgrade
 * ({@link io.frameecho.server.impl.netty.TlsUpgrade}), the listener
 * ({@link io.frameecho.server.impl.netty.Listener}), the server that accepts on its own event loop
 * (X
 * set and keep-alive times: {@link io.frameecho.server.impl.netty.NewcomerPresets}), where the Vert.x lines differ
 * ({@link io.frameecho.server.impl.netty.VertxLine}), epoll's interest set and TCP_INFO
 * ({@link io.frameecho.server.impl.netty.EpollProbe}), the read sizes the budget caps
 * ({@link io.frameecho.server.impl.netty.CappedReads}), the cluster's members
 * ({@link io.frameecho.server.impl.netty.ClusterView}), and what start-up says of them
 * ({@link io.frameecho.server.impl.netty.Internals}). Each reflective lookup is made once and serves one thing: one
 * that fails turns off only that, and start-up says so in one line. <b>Threading rule:</b> each class runs on its
 * channel's event loop unless its Javadoc says otherwise ({@code Listener}'s tasks run on the listener's event loop;
 * the lookups are made once and read from any thread).
 */
package io.frameecho.server.impl.netty;
