package io.frameecho.server.impl.connection;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

import java.util.ArrayList;
import java.util.List;

/**
 * The reads handed to connections, as direct buffers from the allocator the server's channels use (as
 * {@link Wire.Reads} makes them: the leak detector's wrapper kept here, the buffer beneath handed over). Each keeps one
 * reference of the simulation's own: a read whose count is back to 1 was released by the code under test, and is
 * dropped at once, so that a long run holds only the reads still in use.
 */
final class SimReads {

  private final List<ByteBuf> inUse = new ArrayList<>();

  /** One read holding {@code bytes}; the receiver owns it and must release it. */
  ByteBuf read(byte[] bytes) {
    ByteBuf buffer = ByteBufAllocator.DEFAULT.directBuffer(bytes.length).writeBytes(bytes);
    inUse.add(buffer);
    ByteBuf read = buffer.unwrap() == null ? buffer : buffer.unwrap();
    return read.retain();
  }

  /** Drops the reads the code under test has released; returns how many are still held by it. */
  int stillHeld() {
    inUse.removeIf(buffer -> {
      if (buffer.refCnt() == 1) {
        buffer.release();
        return true;
      }
      return false;
    });
    return inUse.size();
  }

  /** Releases the simulation's own references to the reads still held (after a failed run), so nothing leaks. */
  void releaseAll() {
    for (ByteBuf buffer : inUse) {
      if (buffer.refCnt() > 0) {
        buffer.release(buffer.refCnt());
      }
    }
    inUse.clear();
  }
}
