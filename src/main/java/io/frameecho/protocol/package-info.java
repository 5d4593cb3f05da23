/**
 * The wire format, with no threads, sockets or Vert.x context: {@link io.frameecho.protocol.LengthField} describes and
 * writes headers, {@link io.frameecho.protocol.FrameParser} turns bytes into frames, {@link io.frameecho.protocol.FrameStream}
 * wraps it as a Vert.x {@code ReadStream}, {@link io.frameecho.protocol.Frames} is frame-echo's own header codec.
 */
package io.frameecho.protocol;
