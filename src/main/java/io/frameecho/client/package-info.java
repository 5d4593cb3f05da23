/**
 * {@link io.frameecho.client.FrameClient}, the frame protocol's client; callable from any thread, it runs on the
 * context it was connected from.
 */
package io.frameecho.client;
