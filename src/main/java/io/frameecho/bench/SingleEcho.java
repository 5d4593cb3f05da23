package io.frameecho.bench;

import io.frameecho.protocol.LengthField;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * The echo of one frame on a churn connection, followed as its bytes arrive in reads of any size: the
 * header (collected byte by byte if it is split), which must announce the length sent, then the payload,
 * checked against the request's pattern with {@code verify}. Nothing may follow it: a churn connection
 * sends one request. Pure logic, no I/O.
 */
final class SingleEcho {

  /** Where the echo stands after a read. */
  enum State {
    /** More bytes are due. */
    WAITING,
    /** The whole echo arrived, and (with verify) matched. */
    ECHOED,
    /** The header announced another length: the stream cannot be followed. */
    WRONG_LENGTH,
    /** The whole echo arrived, of the right length, with other bytes than were sent. */
    MISMATCH,
    /** Bytes after the echo: an answer to no request. */
    TOO_MUCH
  }

  private final LengthField form;
  private final int size;
  private final long seed;
  private final boolean verify;
  /** The header's bytes as they come, and the body length it announces once whole. */
  private final byte[] header;
  private int headerBytes;
  private long announced;
  private int bodyOffset;
  private boolean bodyMismatch;
  private State state = State.WAITING;

  /**
   * @param size the payload length sent
   * @param seed the request's {@link PayloadPattern} seed (read only with {@code verify})
   */
  SingleEcho(int size, long seed, boolean verify) {
    this(LengthField.DEFAULT, size, seed, verify);
  }

  /** For frames of {@code form}. */
  SingleEcho(LengthField form, int size, long seed, boolean verify) {
    this.form = form;
    this.header = new byte[form.headerSize()];
    this.size = size;
    this.seed = seed;
    this.verify = verify;
  }

  /**
   * Consumes what {@code in} holds and says where the echo stands. Once it is past WAITING it stays, except that
   * bytes arriving after a whole echo make it TOO_MUCH.
   */
  State read(ByteBuf in) {
    while (state == State.WAITING && in.isReadable()) {
      if (headerBytes < header.length) {
        header[headerBytes++] = in.readByte();
        if (headerBytes == header.length) {
          announced = form.readLength(Unpooled.wrappedBuffer(header), 0) + form.lengthAdjustment();
          if (announced != size) {
            state = State.WRONG_LENGTH;
          }
        }
      } else {
        int n = Math.min(size - bodyOffset, in.readableBytes());
        if (verify && !bodyMismatch && !PayloadPattern.matches(in, seed, bodyOffset, n)) {
          bodyMismatch = true;
        }
        in.skipBytes(n);
        bodyOffset += n;
      }
      if (state == State.WAITING && headerBytes == header.length && bodyOffset == size) {
        state = bodyMismatch ? State.MISMATCH : State.ECHOED;
      }
    }
    if ((state == State.ECHOED || state == State.MISMATCH) && in.isReadable()) {
      in.skipBytes(in.readableBytes());
      state = State.TOO_MUCH;
    }
    return state;
  }

  /** The length the header announced (meaningful once it is in). */
  long announcedLength() {
    return announced;
  }
}
