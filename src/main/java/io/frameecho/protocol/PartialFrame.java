package io.frameecho.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

import static io.frameecho.protocol.Frames.HEADER_SIZE;

/**
 * The bytes of one frame that spans reads, gathered into memory of its own: {@link FrameParser}'s buffer
 * housekeeping.
 * <p>
 * When a read ends inside a header, its first bytes are kept in a 4-byte buffer. Once the header has told the
 * frame's size, the frame (header included) is gathered into one buffer of exactly that size or, above
 * {@link #PIECE_SIZE}, into pieces of that size joined in a composite: memory the allocator pools and reuses,
 * rather than a fresh allocation per big frame or a buffer doubling its way up.
 * <p>
 * Not thread-safe; one per parser.
 */
final class PartialFrame {

  /** Frames bigger than this that span reads are gathered in pieces of this size (1 MiB). */
  static final int PIECE_SIZE = 1 << 20;

  /** The first bytes of a header a read ended in; null when none. */
  private ByteBuf header;
  /** The frame being gathered, header included: an exact-size buffer, or a composite of full pieces; null when none. */
  private ByteBuf frame;
  /** The piece being filled before it joins {@link #frame}; null when none. */
  private ByteBuf piece;
  /** Bytes {@link #frame} still lacks. */
  private int missing;

  /** A read ended inside a header: keeps what there is of it (fewer than 4 bytes), all of {@code in}. */
  void startHeader(ByteBuf in) {
    header = in.alloc().buffer(HEADER_SIZE);
    header.writeBytes(in);
  }

  /** Adds header bytes from {@code in}; true once the header is whole. */
  boolean fillHeader(ByteBuf in) {
    header.writeBytes(in, Math.min(HEADER_SIZE - header.readableBytes(), in.readableBytes()));
    return header.readableBytes() == HEADER_SIZE;
  }

  /** The length the whole header from {@link #fillHeader} announces. */
  long headerLength() {
    return Frames.readLength(header, header.readerIndex());
  }

  /** True while a header that came across reads waits here, not yet moved into a frame by {@link #start}. */
  boolean hasHeader() {
    return header != null;
  }

  /**
   * Starts gathering a frame of {@code frameSize} bytes (header included), moving in the header kept by
   * {@link #startHeader} if there is one; the caller {@link #fill}s the rest.
   */
  void start(ByteBufAllocator alloc, int frameSize) {
    if (header != null && frameSize == HEADER_SIZE) {
      // A zero-length frame: its header alone is the whole frame.
      frame = header;
      header = null;
      missing = 0;
      return;
    }
    missing = frameSize;
    frame = frameSize <= PIECE_SIZE ? alloc.ioBuffer(frameSize) : alloc.compositeDirectBuffer(Integer.MAX_VALUE);
    if (header != null) {
      fill(header);
      header.release();
      header = null;
    }
  }

  /** Copies from {@code from} into the frame, up to the frame's end; true once the frame is whole. */
  boolean fill(ByteBuf from) {
    if (!(frame instanceof CompositeByteBuf pieces)) {
      int n = Math.min(missing, from.readableBytes());
      frame.writeBytes(from, n);
      missing -= n;
      return missing == 0;
    }
    while (missing > 0 && from.isReadable()) {
      if (piece == null) {
        piece = from.alloc().ioBuffer(Math.min(PIECE_SIZE, missing));
      }
      int n = Math.min(piece.writableBytes(), from.readableBytes());
      piece.writeBytes(from, n);
      missing -= n;
      if (!piece.isWritable()) {
        pieces.addComponent(true, piece);
        piece = null;
      }
    }
    return missing == 0;
  }

  /** The whole frame, which the caller now owns; this is empty again. */
  ByteBuf take() {
    ByteBuf whole = frame;
    frame = null;
    return whole;
  }

  /** Releases whatever is held. */
  void release() {
    header = release(header);
    frame = release(frame);
    piece = release(piece);
    missing = 0;
  }

  private static ByteBuf release(ByteBuf buffer) {
    if (buffer != null) {
      buffer.release();
    }
    return null;
  }
}
