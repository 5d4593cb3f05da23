/**
 * What every event loop of one deployment shares: the buffer budget ({@link
 * io.frameecho.server.impl.shared.BufferBudget}, with one {@link io.frameecho.server.impl.shared.BudgetAccount}
 * per connection), the connection limits, and the rate limits on their log lines ({@link
 * io.frameecho.server.impl.shared.LogSummary}). <b>Threading rule:</b> every access from more than one thread to
 * the connections, their budget and their limits lives in this package (atomics, opaque stores, the eviction
 * check's lock, each log cause's lock); what crosses back to a connection is handed to its own event loop with {@code runOnContext}.
 * (The optional meters in {@code ops} keep thread-safe state of their own.)
 */
package io.frameecho.server.impl.shared;
