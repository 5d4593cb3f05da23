/**
 * The load generator behind {@code bench}, on Netty directly. <b>Rule:</b> the runnable jar only; its own
 * event loops, nothing shared with the server.
 */
package io.frameecho.bench;
