package io.frameecho.server.impl.connection;

import java.util.Arrays;

/** Bytes in order, appended at one end and taken from the other: a kernel buffer, or answers a client expects. */
final class ByteQueue {

  private byte[] bytes = new byte[1024];
  private int start;
  private int end;

  int size() {
    return end - start;
  }

  void append(byte[] from, int offset, int length) {
    if (end + length > bytes.length) {
      int size = size();
      byte[] to = size + length <= bytes.length / 2 ? bytes : new byte[Math.max(2 * bytes.length, 2 * (size + length))];
      System.arraycopy(bytes, start, to, 0, size);
      bytes = to;
      start = 0;
      end = size;
    }
    System.arraycopy(from, offset, bytes, end, length);
    end += length;
  }

  void append(byte[] from) {
    append(from, 0, from.length);
  }

  /** Takes the first {@code length} bytes. */
  byte[] take(int length) {
    byte[] out = Arrays.copyOfRange(bytes, start, start + length);
    start += length;
    if (start == end) {
      start = end = 0;
    }
    return out;
  }

  void clear() {
    start = end = 0;
  }
}
