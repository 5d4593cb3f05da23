/**
 * The public API: {@link io.frameecho.server.FrameEchoServer} (a facade over its implementation),
 * {@link io.frameecho.server.FrameEchoVerticle}, the options, the {@link io.frameecho.server.RequestHandler}
 * applications implement, and what operators see ({@link io.frameecho.server.CloseReason},
 * {@link io.frameecho.server.Rejection}, reported through {@link io.frameecho.server.FrameEchoMetrics}).
 * <b>Threading rule:</b> a server and its verticle belong to the event loop they were created on; a
 * {@code RequestHandler} and a {@code FrameEchoMetrics} are called on a connection's event loop and must not block.
 */
// Vert.x's codegen generates the options' JSON converters (@DataObject) in the packages of a module it is told of.
@ModuleGen(name = "frame-echo", groupPackage = "io.frameecho")
package io.frameecho.server;

import io.vertx.codegen.annotations.ModuleGen;
