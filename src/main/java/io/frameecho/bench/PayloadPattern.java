package io.frameecho.bench;

import io.netty.buffer.ByteBuf;

/**
 * The bytes of request number {@code seq} on connection {@code connection}: every request's payload
 * differs from its neighbours', so an echo that is wrong, shifted or reordered fails verification.
 * Byte {@code i} is byte {@code i % 8} of a 64-bit hash of the pair, xor {@code i}.
 */
public final class PayloadPattern {

  private PayloadPattern() {
  }

  /** The hash that seeds one request's bytes (SplitMix64's finaliser). */
  public static long seed(int connection, long seq) {
    long z = ((long) connection << 40) ^ seq ^ 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  public static byte byteAt(long seed, int index) {
    return (byte) ((seed >>> ((index & 7) << 3)) ^ index);
  }

  /** Appends {@code length} pattern bytes to {@code out}. */
  public static void write(ByteBuf out, long seed, int length) {
    for (int i = 0; i < length; i++) {
      out.writeByte(byteAt(seed, i));
    }
  }

  /**
   * Checks {@code length} readable bytes of {@code in}, starting at its reader index, against the pattern
   * from position {@code offset}; the reader index does not move.
   */
  public static boolean matches(ByteBuf in, long seed, int offset, int length) {
    int base = in.readerIndex();
    for (int i = 0; i < length; i++) {
      if (in.getByte(base + i) != byteAt(seed, offset + i)) {
        return false;
      }
    }
    return true;
  }
}
