/**
 * The wire format, pure: no threads, no sockets, no Vert.x context. {@link io.frameecho.protocol.LengthField} describes
 * a header (frame-echo's own by default, or any length field of 1 to 8 bytes) and writes frames;
 * {@link io.frameecho.protocol.FrameParser} turns bytes into frames and reports to two methods (a frame, a failure) and
 * the end of its stream; {@link io.frameecho.protocol.FrameStream} is that parser as a Vert.x {@code ReadStream} of
 * messages; {@link io.frameecho.protocol.Frames} is frame-echo's own header codec. Everything here is fed by hand in
 * its tests.
 */
package io.frameecho.protocol;
