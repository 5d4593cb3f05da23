/**
 * The only code that touches Netty channels under Vert.x sockets and Vert.x's unsupported
 * {@code io.vertx.core.internal} API, one class per job. Only {@link io.frameecho.server.impl.netty.EpollProbe} reaches
 * past Netty's public API, to work around an epoll defect (see src/docs/upstream). Each class runs on its channel's
 * event loop unless its Javadoc says otherwise.
 */
package io.frameecho.server.impl.netty;
