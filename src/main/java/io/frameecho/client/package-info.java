/**
 * {@link io.frameecho.client.FrameClient}, the frame protocol's client. <b>Threading rule:</b> the caller's
 * context: a client may be called from any thread, and its work runs on the context it was connected from.
 */
package io.frameecho.client;
