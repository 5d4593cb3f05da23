package io.frameecho.server.impl.connection;

import io.frameecho.server.impl.netty.CappedReads;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.frameecho.testkit.VirtualTicker;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Random;
import java.util.concurrent.Executor;

/**
 * A simulated TCP socket between one client and one {@link Connection}. Towards the client: a bounded kernel receive
 * buffer (a client cannot send past it), the FIN and the reset. Towards the connection: reads delivered only while
 * reading is on, of a random size up to the budget's cap (asked, as the channel asks it, only for a read larger than a
 * small one), whole TLS records in TLS mode; a write queue whose bytes the kernel takes only while the client reads,
 * completing each write's future then, with {@code writeQueueFull()} past {@code writeQueueMaxSize} and the
 * {@link Connection#writable} event once it drains below half (Vert.x's drain handler); and the three closes, each
 * ending in one {@link Connection#closed} on the connection's loop.
 */
final class SimSocket implements ConnectionSocket {

  /** A write not yet taken whole by the kernel; a FIN marker has no bytes and runs {@code then} when its turn comes. */
  private static final class Write {
    final ByteBuf bytes;
    final Promise<Void> promise;
    final Runnable then;

    Write(ByteBuf bytes, Promise<Void> promise, Runnable then) {
      this.bytes = bytes;
      this.promise = promise;
      this.then = then;
    }
  }

  final int id;
  final int loop;
  private final SimConfig config;
  private final VirtualTicker ticker;
  private final SimReads reads;
  private final Random random;
  private final Executor loopTasks;
  private Connection connection;

  // ---- the receive side ----
  private final ByteQueue kernelIn = new ByteQueue();
  /** TLS mode: the lengths of the whole records in {@link #kernelIn}. */
  private final ArrayDeque<Integer> records = new ArrayDeque<>();
  private boolean readingOn = true;
  private long readingOffSince = -1;
  private long readingOffNanos;
  private boolean clientFin;
  private boolean clientReset;
  /** The server has read the client's FIN: Netty's input shutdown. */
  private boolean inputShutdown;
  /** The channel's half-closure, set as {@code ChannelSocket} sets it: on at a read, off at a read's end owing nothing. */
  private boolean halfClosureAllowed = true;
  /** Bytes handed to the connection, and where its parser stands in the client's frames. */
  private final ParserPosition position = new ParserPosition();

  // ---- the send side ----
  private final ArrayDeque<Write> writeQueue = new ArrayDeque<>();
  private long pending;
  private boolean wasFull;
  private long stuckSince = -1;
  private long lastTakeNanos;

  // ---- the close ----
  private boolean closeAsked;
  /** The FIN went out after the last response: the close lingers. */
  private boolean finSent;
  private boolean closedNow;
  /** Bytes the client sent were unread when the socket closed: the kernel answers with a reset, which the client sees. */
  private boolean resetAtClose;
  private boolean closedDelivered;
  private long lingerTimer = -1;
  /** Whether a successor process takes this socket at a shutdown's close; asked at that close. */
  private java.util.function.BooleanSupplier successor = () -> false;
  /** The socket moved to the successor instead of closing: what the kernel held for it moved with it. */
  private boolean handedOver;

  SimSocket(int id, int loop, SimConfig config, VirtualTicker ticker, SimReads reads, Random random, Executor loopTasks) {
    this.id = id;
    this.loop = loop;
    this.config = config;
    this.ticker = ticker;
    this.reads = reads;
    this.random = random;
    this.loopTasks = loopTasks;
    this.lastTakeNanos = ticker.nanoTime();
  }

  void attach(Connection connection) {
    this.connection = connection;
  }

  /** From now on a shutdown's close asks {@code successor} whether a successor process takes the socket. */
  void successor(java.util.function.BooleanSupplier successor) {
    this.successor = successor;
  }

  // ==== ConnectionSocket: what the connection does ====

  @Override
  public void reading(boolean on) {
    // As the channel: nothing is left to read once the client's input has ended.
    if ((on && inputShutdown) || on == readingOn) {
      return;
    }
    readingOn = on;
    long now = ticker.nanoTime();
    if (on) {
      readingOffNanos += now - readingOffSince;
      readingOffSince = -1;
    } else {
      readingOffSince = now;
    }
  }

  @Override
  public boolean writeQueueFull() {
    return pending > config.writeQueueMaxSize();
  }

  @Override
  public long pendingWriteBytes() {
    return pending;
  }

  @Override
  public Future<Void> write(ByteBuf bytes) {
    if (closedNow) {
      bytes.release();
      return Future.failedFuture(new IOException("closed"));
    }
    Promise<Void> promise = Promise.promise();
    writeQueue.add(new Write(bytes, promise, null));
    pending += bytes.readableBytes();
    if (writeQueueFull()) {
      wasFull = true;
    }
    completeEmptyHeads();
    return promise.future();
  }

  @Override
  public Future<Void> write(Buffer bytes) {
    return write(Unpooled.wrappedBuffer(bytes.getBytes()));
  }

  @Override
  public void closeLingering(long lingerMs) {
    finThenLinger(lingerMs, false);
  }

  @Override
  public void closeOwingNothing(long lingerMs) {
    finThenLinger(lingerMs, true);
  }

  /** As the channel: once every queued response is written, a FIN; then reads (discarded) until the client's FIN or the linger ends. */
  private void finThenLinger(long lingerMs, boolean afterFin) {
    if (closeAsked || closedNow) {
      return;
    }
    closeAsked = true;
    writeQueue.add(new Write(Unpooled.EMPTY_BUFFER, Promise.promise(), () -> {
      // As ChannelSocket: every response written, a socket the connection lets go moves instead of closing (not TLS's).
      if (!config.tls() && !inputShutdown && successor.getAsBoolean() && connection.handOverAllowed()) {
        handedOver = true;
        closeNow();
        return;
      }
      if ((lingerMs == 0 && !afterFin) || inputShutdown) {
        closeNow();
        return;
      }
      finSent = true;
      reading(true);
      if (afterFin && lingerMs == 0) {
        loopTasks.execute(this::closeNow);
      } else {
        lingerTimer = ticker.schedule(lingerMs, () -> {
          lingerTimer = -1;
          closeNow();
        });
      }
    }));
    completeEmptyHeads();
  }

  @Override
  public boolean lingering() {
    return finSent;
  }

  @Override
  public boolean handedOver() {
    return handedOver;
  }

  /** Bytes the connection has read from this socket. */
  long deliveredBytes() {
    return position.delivered;
  }

  @Override
  public void closeNow() {
    if (closedNow) {
      return;
    }
    closedNow = true;
    // A socket handed over is not closed in the kernel: what its client sent waits there for the successor.
    resetAtClose = !handedOver && kernelIn.size() > 0;
    if (lingerTimer >= 0) {
      ticker.cancel(lingerTimer);
      lingerTimer = -1;
    }
    kernelIn.clear();
    records.clear();
    // As Netty: queued writes fail at the close; the channel's inactive event comes on a later turn of its loop.
    pending = 0;
    Write write;
    while ((write = writeQueue.poll()) != null) {
      write.bytes.release();
      write.promise.tryFail(new IOException("closed"));
    }
    loopTasks.execute(() -> {
      closedDelivered = true;
      connection.closed();
    });
  }

  @Override
  public boolean resetByPeer() {
    return clientReset;
  }

  @Override
  public long msSinceDataSent() {
    return config.tcpInfo() ? (ticker.nanoTime() - lastTakeNanos) / 1_000_000 : -1;
  }

  @Override
  public boolean clientClosed() {
    return clientFin || clientReset;
  }

  // ==== the network: the event loop's look at this socket ====

  /** One look by the event loop: a read, the client's FIN or its reset; returns what happened, for the trace. */
  String ioStep() {
    if (closedNow) {
      return null;
    }
    if (clientReset) {
      connection.failed(new IOException("connection reset by peer"));
      closeNow();
      return "reset reaches the server";
    }
    if (!readingOn) {
      return null;
    }
    if (kernelIn.size() > 0) {
      // As Netty's read loop: on, while each read fills what it guessed, up to 16 reads a look.
      String did = read();
      for (int reads = 1; reads < MAX_READS_PER_LOOK && lastReadFilled && readingOn && !closedNow && kernelIn.size() > 0;
           reads++) {
        did += "; " + read();
      }
      readComplete();
      return did;
    }
    if (clientFin && !inputShutdown) {
      if (finSent) {
        if (config.tls()) {
          // The client's close_notify before its FIN: a read the TLS layer hands over with no application byte.
          connection.bytes(reads.read(new byte[0]));
        }
        inputShutdown = true;
        closeNow();
        return "client FIN ends the linger";
      }
      // As epoll: the look's end (read complete) comes before the end of input is acted on.
      readComplete();
      if (!halfClosureAllowed) {
        closeNow();
        return "client FIN read, nothing owed: closed";
      }
      inputShutdown = true;
      connection.inputEnded();
      return "client FIN read";
    }
    return null;
  }

  /** {@code ChannelSocket}'s half-closure rule at the end of a look. */
  private void readComplete() {
    if (halfClosureAllowed && !closedNow && !inputShutdown && !finSent && connection.owesNothing()) {
      halfClosureAllowed = false;
    }
  }

  /** Netty's {@code maxMessagesPerRead} for a socket: the most reads one look at it makes. */
  private static final int MAX_READS_PER_LOOK = 16;
  private boolean lastReadFilled;

  private String read() {
    int guess = random.nextInt(4) == 0 ? 1 + random.nextInt(SimulationBounds.SMALL_READ)
      : 1 + random.nextInt(SimulationBounds.FULL_READ);
    guess = CappedReads.readSize(guess, connection::readCap);
    // The channel reads on while a read fills what it guessed: over TLS too, where it reads raw bytes (the TLS layer
    // hands the connection whole records).
    lastReadFilled = kernelIn.size() >= guess;
    int length;
    if (config.tls()) {
      // Whole records only, as many as the read takes, one at least.
      length = records.poll();
      while (!records.isEmpty() && length + records.peek() <= guess) {
        length += records.poll();
      }
    } else {
      // As CappedReads: the read may land in the memory of the frame under way, and take as much as that holds; one in
      // six such reads finds the socket empty (the kernel's bytes come in the next read) and is released unread.
      ByteBuf into = connection.readInto(ByteBufAllocator.DEFAULT, guess);
      if (into != null && random.nextInt(6) == 0) {
        into.release();
        into = null;
      }
      if (into != null) {
        lastReadFilled = kernelIn.size() >= into.writableBytes();
        length = Math.min(into.writableBytes(), kernelIn.size());
        halfClosureAllowed = true;
        into.writeBytes(kernelIn.take(length));
        if (!finSent) {
          position.delivered(length, ticker.nanoTime(), readingOffNanos);
        }
        connection.bytes(into);
        return "read " + length + " into the frame, of guess " + guess;
      }
      length = Math.min(guess, kernelIn.size());
    }
    halfClosureAllowed = true;
    byte[] bytes = kernelIn.take(length);
    if (!finSent) {
      position.delivered(length, ticker.nanoTime(), readingOffNanos);
    }
    connection.bytes(reads.read(bytes));
    return "read " + length + " of guess " + guess;
  }

  // ==== the client's side ====

  /** The client sends: the kernel takes what fits in its receive buffer; returns how much. */
  int clientSend(byte[] bytes, int offset, int length) {
    if (clientFin || clientReset || closedNow) {
      return 0;
    }
    int taken = Math.min(length, config.kernelBufferBytes() - kernelIn.size());
    if (taken <= 0) {
      return 0;
    }
    kernelIn.append(bytes, offset, taken);
    if (config.tls()) {
      for (int left = taken; left > 0; left -= SimConfig.TLS_RECORD) {
        records.add(Math.min(left, SimConfig.TLS_RECORD));
      }
    }
    return taken;
  }

  /** The client's next frame ends at {@code end} bytes into what it sends. */
  void clientFrameEnds(long end) {
    position.frameEnds(end);
  }

  /** The client reads: the kernel takes up to {@code max} queued response bytes for it; null when none. */
  byte[] clientReceive(int max) {
    if (closedNow || pending == 0 || max <= 0) {
      return null;
    }
    ByteQueue got = new ByteQueue();
    int left = max;
    Write head;
    while (left > 0 && (head = writeQueue.peek()) != null) {
      int n = Math.min(left, head.bytes.readableBytes());
      byte[] part = new byte[n];
      head.bytes.readBytes(part);
      got.append(part);
      left -= n;
      pending -= n;
      if (!head.bytes.isReadable()) {
        writeQueue.poll();
        head.bytes.release();
        head.promise.tryComplete();
      }
      completeEmptyHeads();
      if (closedNow) {
        break;
      }
    }
    lastTakeNanos = ticker.nanoTime();
    if (wasFull && pending < config.writeQueueMaxSize() / 2 && !closedNow) {
      wasFull = false;
      connection.writable();
    }
    return got.take(got.size());
  }

  /** Writes of no bytes (the FIN marker, an empty buffer) complete as soon as they are at the head of the queue. */
  private void completeEmptyHeads() {
    Write head;
    while (!closedNow && (head = writeQueue.peek()) != null && !head.bytes.isReadable()) {
      writeQueue.poll();
      head.bytes.release();
      head.promise.tryComplete();
      if (head.then != null) {
        head.then.run();
      }
    }
  }

  void clientFin() {
    clientFin = true;
  }

  void clientReset() {
    if (!closedNow) {
      clientReset = true;
      kernelIn.clear();
      records.clear();
    }
  }

  /** The server's FIN has come and every response before it was read. */
  boolean serverFinSeen() {
    return finSent && pending == 0;
  }

  /** Closed at once (a reset, as the client sees it), or after the FIN. */
  boolean closedByServer() {
    return closedNow;
  }

  boolean closedDelivered() {
    return closedDelivered;
  }

  /** The client saw the server's close as a reset: it had sent bytes the server never read. */
  boolean resetAtClose() {
    return resetAtClose;
  }

  Connection connection() {
    return connection;
  }

  // ==== what the invariants look at ====

  /**
   * How long the frame under way at the server has been incomplete, not counting any time reading was off (the
   * server excludes less: time paused for the budget counts), or -1 when none is, or the close has begun.
   */
  long incompleteFrameMs() {
    if (closeAsked || closedNow || !position.underWay()) {
      return -1;
    }
    long now = ticker.nanoTime();
    long off = readingOffNanos + (readingOffSince >= 0 ? now - readingOffSince : 0);
    return (now - position.startedNanos() - (off - position.offAtStartNanos())) / 1_000_000;
  }

  /**
   * How long the write queue has been stuck (over its mark, or a close waiting to flush) with the kernel taking no
   * byte; -1 when it is not stuck.
   */
  long writeStuckMs() {
    boolean stuck = !closedNow && (writeQueueFull() || (closeAsked && !finSent && pending > 0));
    long now = ticker.nanoTime();
    if (!stuck) {
      stuckSince = -1;
      return -1;
    }
    if (stuckSince < 0) {
      stuckSince = now;
    }
    return (now - Math.max(stuckSince, lastTakeNanos)) / 1_000_000;
  }

  /** Where the server's parser stands in the client's frames, from the bytes delivered: at a boundary or not, since when. */
  private static final class ParserPosition {
    private final ArrayDeque<Long> frameEnds = new ArrayDeque<>();
    private long delivered;
    private long lastBoundary;
    private long startedNanos;
    private long offAtStart;

    void frameEnds(long end) {
      frameEnds.add(end);
    }

    void delivered(int length, long now, long offNanos) {
      boolean wasUnderWay = underWay();
      delivered += length;
      boolean passed = false;
      while (!frameEnds.isEmpty() && frameEnds.peek() <= delivered) {
        lastBoundary = frameEnds.poll();
        passed = true;
      }
      if (underWay() && (passed || !wasUnderWay)) {
        startedNanos = now;
        offAtStart = offNanos;
      }
    }

    boolean underWay() {
      return delivered != lastBoundary;
    }

    long startedNanos() {
      return startedNanos;
    }

    long offAtStartNanos() {
      return offAtStart;
    }
  }
}
