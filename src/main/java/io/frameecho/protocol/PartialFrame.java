package io.frameecho.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

/**
 * The bytes of one frame that spans reads, gathered for {@link FrameParser}. Memory follows the bytes that arrived,
 * never the length a header announces, so a header alone cannot make the server set memory aside: a frame up to
 * {@link #SMALL_FRAME} goes into one buffer of its size; a bigger one into power-of-two pieces (pooled, never copied to
 * grow) about as large as what has arrived, up to {@link #PIECE_SIZE}, so a large frame is written in few pieces and at
 * most about as much again as arrived is set aside. Not thread-safe.
 */
final class PartialFrame {

  /** The largest piece (1 MiB). */
  static final int PIECE_SIZE = 1 << 20;
  /**
   * Frames up to this size, header included, go into one buffer of their size. It is set aside when the header is
   * decided, so it is the one amount not tied to bytes received: at most this much per connection.
   */
  static final int SMALL_FRAME = 16 << 10;
  /** The smallest piece once a frame is under way, so that a trickle does not make a piece per byte. */
  static final int MIN_PIECE = 4 << 10;

  private final LengthField form;
  private final int headerSize;

  PartialFrame(LengthField form) {
    this.form = form;
    this.headerSize = form.headerSize();
  }

  /** The first bytes of a header a read ended in; null when none. */
  private ByteBuf header;
  /** The frame being gathered, header included: an exact-size buffer, or a composite of full pieces; null when none. */
  private ByteBuf frame;
  /** The piece being filled before it joins {@link #frame}; null when none. */
  private ByteBuf piece;
  private int missing;
  private int gathered;
  /** The read lent {@link #piece}'s memory, compared by identity only: the reader owns and releases it. */
  private ByteBuf lent;
  private int lentAt;

  /** Keeps the start of a header a read ended in. */
  void startHeader(ByteBuf in) {
    header = in.alloc().buffer(headerSize);
    header.writeBytes(in);
  }

  /** Adds header bytes from {@code in}; true once the header is whole. */
  boolean fillHeader(ByteBuf in) {
    header.writeBytes(in, Math.min(headerSize - header.readableBytes(), in.readableBytes()));
    return header.readableBytes() == headerSize;
  }

  long headerLength() {
    return form.readLength(header, header.readerIndex());
  }

  /** Starts gathering a frame of {@code frameSize} bytes, header included, moving in a kept header. */
  void start(ByteBufAllocator alloc, int frameSize) {
    if (header != null && frameSize == headerSize) {
      frame = header;
      header = null;
      missing = 0;
      return;
    }
    missing = frameSize;
    gathered = 0;
    if (frameSize <= SMALL_FRAME) {
      frame = alloc.ioBuffer(frameSize);
      if (header != null) {
        fill(header);
        header.release();
        header = null;
      }
      return;
    }
    CompositeByteBuf pieces = alloc.compositeDirectBuffer(Integer.MAX_VALUE);
    frame = pieces;
    if (header != null) {
      // The header becomes the first piece: nothing is set aside before body bytes arrive.
      pieces.addComponent(true, header);
      header = null;
      missing -= headerSize;
      gathered = headerSize;
    }
  }

  /**
   * Memory for the socket's next read inside a large frame, so the kernel's copy is the only one. Null unless the frame
   * lacks {@code least} bytes (a read's guess): a shorter read of its own would cost a system call that an ordinary read
   * saves. While the frame lacks more than a piece, it is no larger than an ordinary read.
   */
  ByteBuf lend(ByteBufAllocator alloc, int least, int most) {
    if (!(frame instanceof CompositeByteBuf) || missing < least) {
      return null;
    }
    if (piece == null) {
      piece = alloc.ioBuffer(nextPieceSize(Math.max(least, gathered)));
    }
    int length = Math.min(Math.min(piece.writableBytes(), missing), missing > PIECE_SIZE ? Math.min(least, most) : most);
    if (length <= 0) {
      return null;
    }
    lentAt = piece.writerIndex();
    lent = piece.retainedSlice(lentAt, length).writerIndex(0);
    return lent;
  }

  /** Copies from {@code from} into the frame, or keeps the bytes where they landed if it is the lent read; true once whole. */
  boolean fill(ByteBuf from) {
    if (lent != null) {
      if (from == lent) {
        return keepLanded(from);
      }
      if (piece.refCnt() > 1) {
        // The lent read may still land later: nothing is copied into its memory, the piece ends here.
        endPiece();
      }
      lent = null;
    }
    if (!(frame instanceof CompositeByteBuf pieces)) {
      int n = Math.min(missing, from.readableBytes());
      frame.writeBytes(from, n);
      missing -= n;
      return missing == 0;
    }
    while (missing > 0 && from.isReadable()) {
      if (piece == null) {
        piece = from.alloc().ioBuffer(nextPieceSize(Math.max(from.readableBytes(), gathered)));
      }
      int n = Math.min(piece.writableBytes(), from.readableBytes());
      piece.writeBytes(from, n);
      missing -= n;
      gathered += n;
      if (!piece.isWritable()) {
        pieces.addComponent(true, piece);
        piece = null;
      }
    }
    return missing == 0;
  }

  private boolean keepLanded(ByteBuf read) {
    lent = null;
    int n = read.readableBytes();
    read.skipBytes(n);
    piece.writerIndex(lentAt + n);
    missing -= n;
    gathered += n;
    if (!piece.isWritable()) {
      ((CompositeByteBuf) frame).addComponent(true, piece);
      piece = null;
    }
    return missing == 0;
  }

  /** The piece joins the frame as it is, its unfilled rest unused. */
  private void endPiece() {
    if (piece.isReadable()) {
      ((CompositeByteBuf) frame).addComponent(true, piece);
    } else {
      piece.release();
    }
    piece = null;
  }

  /**
   * {@code wanted} rounded down to a power of two so the allocator pools it; at least {@link #MIN_PIECE} once under
   * way, so a trickle does not make a piece per byte; at most {@link #PIECE_SIZE} and what the frame lacks.
   */
  private int nextPieceSize(int wanted) {
    int size = Integer.highestOneBit(Math.max(1, wanted));
    if (gathered > 0) {
      size = Math.max(size, MIN_PIECE);
    }
    return Math.min(missing, Math.min(PIECE_SIZE, size));
  }

  /** The unfilled part of the piece being filled: memory set aside beyond the bytes. */
  long setAsideBytes() {
    return piece == null ? 0 : piece.writableBytes();
  }

  /** The whole frame, which the caller now owns; nothing else is held once it is whole. */
  ByteBuf take() {
    ByteBuf whole = frame;
    frame = null;
    return whole;
  }

  void release() {
    header = release(header);
    frame = release(frame);
    piece = release(piece);
    lent = null;
    missing = 0;
    gathered = 0;
  }

  private static ByteBuf release(ByteBuf buffer) {
    if (buffer != null) {
      buffer.release();
    }
    return null;
  }
}
