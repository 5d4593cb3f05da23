/**
 * What operators see, and optional: frame-echo's Micrometer meters, readiness, and the HTTP endpoint for
 * {@code /metrics} and {@code /health}. <b>Rule:</b> the only package that touches Micrometer (an optional
 * dependency, loaded only when metrics are on); nothing else may need it. Shared by every server of one
 * Vert.x instance, so its state is thread-safe.
 */
package io.frameecho.server.impl.ops;
