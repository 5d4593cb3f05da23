/**
 * What operators see, and optional: frame-echo's Micrometer meters, readiness, and the HTTP endpoint for
 * {@code /metrics} and {@code /health}. <b>Rule:</b> the only package that touches Micrometer (an optional
 * dependency, loaded only when a server turns metrics on); nothing else may need it. Readiness and the registries
 * are shared by every server of one Vert.x instance, meters are made per server: their state is thread-safe.
 */
package io.frameecho.server.impl.ops;
