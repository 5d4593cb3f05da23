/**
 * The only code that touches Netty's channels under a Vert.x socket and Vert.x's {@code io.vertx.core.internal} (which
 * Vert.x exports to every module as its unsupported internal API), one class per job: the socket a connection talks to
 * ({@link io.frameecho.server.impl.netty.ChannelSocket}, through {@link io.frameecho.server.impl.netty.Sockets}), held
 * newcomers and the reads before a socket is attached ({@link io.frameecho.server.impl.netty.HeldNewcomers}), the TLS
 * upgrade ({@link io.frameecho.server.impl.netty.TlsUpgrade}), the PROXY header
 * ({@link io.frameecho.server.impl.netty.ProxyHeader}), the listener ({@link io.frameecho.server.impl.netty.Listener}),
 * TCP_INFO ({@link io.frameecho.server.impl.netty.TcpInfo}), the read sizes the budget caps
 * ({@link io.frameecho.server.impl.netty.CappedReads}), the cluster's members
 * ({@link io.frameecho.server.impl.netty.ClusterView}), the handover ({@link io.frameecho.server.impl.netty.Successor},
 * {@link io.frameecho.server.impl.netty.Adoption}) and what start-up says
 * ({@link io.frameecho.server.impl.netty.Internals}). One class reaches past what Netty exports, for what has no public
 * API, with its upstream report in src/docs/upstream: {@link io.frameecho.server.impl.netty.EpollProbe} (Netty's epoll
 * half-closure defects). <b>Threading rule:</b> each class runs on its channel's event loop unless its Javadoc says
 * otherwise ({@code Listener}'s tasks run on the listener's event loop).
 */
package io.frameecho.server.impl.netty;
