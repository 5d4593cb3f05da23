/**
 * The wire format, pure: no threads, no sockets, no Vert.x context. {@link io.frameecho.protocol.FrameParser}
 * turns bytes into frames and reports to two methods (a frame, a failure) and the end of its stream;
 * {@link io.frameecho.protocol.Frames} is the header codec. Everything here is fed by hand in its tests.
 */
package io.frameecho.protocol;
