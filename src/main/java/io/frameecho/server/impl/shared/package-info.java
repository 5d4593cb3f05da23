/**
 * State shared by all event loops of one deployment: the buffer budget, the connection limits and their rate-limited
 * logs. All cross-thread access to connections, budget and limits lives in this package; anything handed back to a
 * connection goes to its own event loop with {@code runOnContext}.
 */
package io.frameecho.server.impl.shared;
