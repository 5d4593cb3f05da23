package io.frameecho.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

import java.util.function.BooleanSupplier;

/**
 * The bytes of one frame that spans reads, gathered into memory of its own: {@link FrameParser}'s buffer
 * housekeeping.
 * <p>
 * Memory follows the bytes that arrived, never the length a header announces: a client that sends a header
 * announcing 32 MiB and nothing more must not make the server set 32 MiB (or 1 MiB) aside. So a frame of up to
 * {@link #SMALL_FRAME} is gathered into one buffer of its size; a bigger one into pieces joined in a
 * composite, each piece about as large as what has arrived so far (or the read that starts it), a power of
 * two, at least {@link #MIN_PIECE} once the frame is under way, at most {@link #PIECE_SIZE}. What is set aside is at most
 * about twice what arrived: memory the allocator pools and reuses, and no buffer copied to grow.
 * <pre>
 *   header   read 1        read 2 ...
 *   [4 B] [piece: 1st read][piece: as big as all before it][...][1 MiB][1 MiB] ... [the rest]
 * </pre>
 * When a read ends inside a header, its first bytes are kept in a buffer of the header's size. While a large frame
 * lacks a whole read or more, the socket's next read can land straight in the piece being filled ({@link #lend}): the
 * kernel's copy is then the only one.
 * <p>
 * Not thread-safe; one per parser.
 */
final class PartialFrame {

  /** The largest piece (1 MiB). */
  static final int PIECE_SIZE = 1 << 20;
  /**
   * Frames up to this size, header included, are gathered into one buffer of their size (16 KiB): a
   * composite for every small frame that spans reads cost about a fifth more CPU per 4 KiB request. Set
   * aside when the header is decided, so it is the one amount not tied to bytes received: 16 KiB per
   * connection at most.
   */
  static final int SMALL_FRAME = 16 << 10;
  /** The smallest piece once a frame is under way, so that a trickle does not make a piece per byte. */
  static final int MIN_PIECE = 4 << 10;

  private final LengthField form;
  private final int headerSize;

  /** Whether memory is scarce: then pieces are sized to the read that starts them, not to what has arrived. */
  BooleanSupplier memoryScarce = () -> false;

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
  /** Bytes {@link #frame} still lacks. */
  private int missing;
  /** Bytes of the frame gathered so far (in {@link #frame} and {@link #piece}). */
  private int gathered;
  /**
   * The read last lent {@link #piece}'s memory ({@link #lend}), until it is filled from; compared by identity only:
   * the reader owns it and releases it.
   */
  private ByteBuf lent;
  /** Where {@link #lent} begins in {@link #piece}: the piece's write position when it was lent. */
  private int lentAt;

  /** A read ended inside a header: keeps what there is of it (fewer than the header's), all of {@code in}. */
  void startHeader(ByteBuf in) {
    header = in.alloc().buffer(headerSize);
    header.writeBytes(in);
  }

  /** Adds header bytes from {@code in}; true once the header is whole. */
  boolean fillHeader(ByteBuf in) {
    header.writeBytes(in, Math.min(headerSize - header.readableBytes(), in.readableBytes()));
    return header.readableBytes() == headerSize;
  }

  /** The length the whole header from {@link #fillHeader} announces. */
  long headerLength() {
    return form.readLength(header, header.readerIndex());
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
    if (header != null && frameSize == headerSize) {
      // A zero-length frame: its header alone is the whole frame.
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
      // The header is the frame's first piece as it is: nothing is set aside before body bytes arrive.
      pieces.addComponent(true, header);
      header = null;
      missing -= headerSize;
      gathered = headerSize;
    }
  }

  /**
   * Memory for the socket's next read inside a large frame: the unfilled part of the piece being filled, at most
   * {@code most} bytes and no more than the frame lacks, so that the kernel copies the bytes to where they stay and
   * {@link #fill} keeps them where they landed. While the frame lacks more than a piece, the read takes no more than
   * an ordinary one would ({@code least}, the read's guess); its last piece's worth may come in one read. Null unless
   * the frame lacks {@code least} bytes at least: a shorter read of its own would cost a system call that an ordinary
   * read, taking the next frames too, saves.
   */
  ByteBuf lend(ByteBufAllocator alloc, int least, int most) {
    if (!(frame instanceof CompositeByteBuf) || missing < least) {
      return null;
    }
    if (piece == null) {
      piece = alloc.ioBuffer(nextPieceSize(least));
    }
    int length = Math.min(Math.min(piece.writableBytes(), missing), missing > PIECE_SIZE ? Math.min(least, most) : most);
    if (length <= 0) {
      return null;
    }
    lentAt = piece.writerIndex();
    lent = piece.retainedSlice(lentAt, length).writerIndex(0);
    return lent;
  }

  /**
   * Copies from {@code from} into the frame, up to the frame's end, or keeps it where it landed if it is the read
   * {@link #lend} made; true once the frame is whole.
   */
  boolean fill(ByteBuf from) {
    if (lent != null) {
      if (from == lent) {
        return keepLanded(from);
      }
      if (piece.refCnt() > 1) {
        // The lent read is still alive and may land later: no byte is copied into its memory, the piece ends here.
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
        piece = from.alloc().ioBuffer(nextPieceSize(from.readableBytes()));
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

  /** The lent read: its bytes are already in the piece, at the piece's write position (nothing was copied since). */
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

  /** The piece being filled joins the frame as it is, its unfilled rest unused; the next bytes go to a new piece. */
  private void endPiece() {
    if (piece.isReadable()) {
      ((CompositeByteBuf) frame).addComponent(true, piece);
    } else {
      piece.release();
    }
    piece = null;
  }

  /**
   * About as large as what has arrived of the frame so far, or as the read that starts the piece (so memory
   * at most about doubles what is held): that size rounded down to a power of two, which the allocator
   * pools (an odd size can be a fresh allocation of direct memory each time, page faults included); at
   * least {@link #MIN_PIECE} once the frame is under way; at most {@link #PIECE_SIZE} and what the frame
   * still lacks.
   */
  private int nextPieceSize(int readable) {
    // While memory is scarce, a piece no larger than the read: what a paused connection sets aside stays small.
    int size = Integer.highestOneBit(Math.max(1, memoryScarce.getAsBoolean() ? readable : Math.max(readable, gathered)));
    if (gathered > 0) {
      size = Math.max(size, MIN_PIECE);
    }
    return Math.min(missing, Math.min(PIECE_SIZE, size));
  }

  /**
   * Memory set aside for a large frame beyond the bytes it holds: the unfilled part of the piece being filled
   * (up to {@link #PIECE_SIZE}). A paused connection keeps it until it reads again, so its owner counts it as
   * held. A small frame's one buffer ({@link #SMALL_FRAME} at most) is not counted: that much per connection
   * is the parser's fixed allowance.
   */
  long setAsideBytes() {
    return piece == null ? 0 : piece.writableBytes();
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
