/**
 * The wire format, with no threads, sockets or Vert.x context: {@link io.frameecho.protocol.LengthField} describes and
 * writes headers ({@code LengthField.DEFAULT}: frame-echo's own), {@link io.frameecho.protocol.FrameParser} turns bytes
 * into frames, {@link io.frameecho.protocol.FrameStream} wraps it as a Vert.x {@code ReadStream}.
 */
package io.frameecho.protocol;
