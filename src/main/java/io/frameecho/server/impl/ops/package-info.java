/**
 * Micrometer meters, readiness and the {@code /metrics} and {@code /health} endpoint. The only package that touches
 * Micrometer, an optional dependency loaded only when metrics are enabled. Shared state here is thread-safe.
 */
package io.frameecho.server.impl.ops;
