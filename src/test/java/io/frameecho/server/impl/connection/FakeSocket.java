package io.frameecho.server.impl.connection;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;

import java.util.ArrayList;
import java.util.List;

/**
 * A {@link ConnectionSocket} without a socket: it keeps what is written (as bytes, in order), lets the test say
 * whether the write queue is full and how much is pending, and completes writes when the test says so
 * ({@link #completeWrites}) or at once ({@link #completeAtOnce}).
 */
final class FakeSocket implements ConnectionSocket {

  /** Every {@link #reading} call, in order. */
  final List<Boolean> demand = new ArrayList<>();
  /** The bytes written, one entry per write, in order. */
  final List<byte[]> writes = new ArrayList<>();
  private final List<Promise<Void>> unfinished = new ArrayList<>();
  boolean completeAtOnce = true;
  boolean full;
  long pending;
  /** The linger given to {@link #closeLingering}, or -1 before. */
  long lingerMs = -1;
  boolean lingering;
  /** Whether a lingering close gets its FIN out at once; false for a peer that reads nothing ({@link #peerReadsNothing}). */
  private boolean flushes = true;
  boolean closedNow;
  /** What {@link #msSinceDataSent} answers: -1, as a transport without TCP_INFO, unless the test says. */
  long msSinceDataSent = -1;

  @Override
  public void reading(boolean on) {
    demand.add(on);
  }

  /** The last demand set, true before any. */
  boolean readingOn() {
    return demand.isEmpty() || demand.get(demand.size() - 1);
  }

  @Override
  public boolean writeQueueFull() {
    return full;
  }

  @Override
  public long pendingWriteBytes() {
    return pending;
  }

  @Override
  public Future<Void> write(ByteBuf bytes) {
    byte[] copy = new byte[bytes.readableBytes()];
    bytes.getBytes(bytes.readerIndex(), copy);
    bytes.release();
    return written(copy);
  }

  @Override
  public Future<Void> write(Buffer bytes) {
    return written(bytes.getBytes());
  }

  private Future<Void> written(byte[] bytes) {
    writes.add(bytes);
    if (completeAtOnce) {
      return Future.succeededFuture();
    }
    Promise<Void> promise = Promise.promise();
    unfinished.add(promise);
    return promise.future();
  }

  /** Completes the writes not completed yet, as written ({@code ok}) or failed. */
  void completeWrites(boolean ok) {
    List<Promise<Void>> now = new ArrayList<>(unfinished);
    unfinished.clear();
    now.forEach(p -> {
      if (ok) {
        p.complete();
      } else {
        p.fail("connection reset");
      }
    });
  }

  /** Completes the oldest write not completed yet, as written. */
  void completeOldestWrite() {
    unfinished.remove(0).complete();
  }

  /** The peer reads nothing more: what is queued stays queued (at least a byte), and a close's FIN does not go out. */
  void peerReadsNothing() {
    flushes = false;
    pending = Math.max(pending, 1);
  }

  /** Everything written, concatenated. */
  Buffer written() {
    Buffer all = Buffer.buffer();
    writes.forEach(all::appendBytes);
    return all;
  }

  @Override
  public void closeLingering(long lingerMs) {
    this.lingerMs = lingerMs;
    lingering = flushes;
  }

  /** Set by {@link #closeOwingNothing}, with how long it lingers. */
  boolean closedOwingNothing;
  long owingNothingLingerMs = -1;

  @Override
  public void closeOwingNothing(long lingerMs) {
    closedOwingNothing = true;
    owingNothingLingerMs = lingerMs;
    lingering = flushes;
  }

  @Override
  public boolean lingering() {
    return lingering;
  }

  @Override
  public void closeNow() {
    closedNow = true;
  }

  static ByteBuf bytes(byte[] bytes) {
    return Unpooled.wrappedBuffer(bytes);
  }

  @Override
  public boolean resetByPeer() {
    return false;
  }

  @Override
  public long msSinceDataSent() {
    return msSinceDataSent;
  }

  @Override
  public boolean clientClosed() {
    return false;
  }
}
