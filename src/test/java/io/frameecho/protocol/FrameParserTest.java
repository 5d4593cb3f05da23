package io.frameecho.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PoolArenaMetric;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The top-level tests feed {@link FrameParser#handle(Buffer)}, a heap copy, and read payloads as Vert.x
 * buffers; {@link OnPooledDirectBuffers} feeds {@link FrameParser#handle(ByteBuf)} the way the server does.
 */
class FrameParserTest {

  private final List<Buffer> frames = new ArrayList<>();
  private final List<Throwable> errors = new ArrayList<>();
  private Consumer<Buffer> onFrame = frames::add;

  private FrameParser parser(int maxFrameSize) {
    return FrameParser.standalone(maxFrameSize, new FrameParser.Listener() {
      @Override
      public void frame(ByteBuf frame) {
        onFrame.accept(LengthField.DEFAULT.message(frame));
      }

      @Override
      public void failed(Throwable error) {
        errors.add(error);
      }
    });
  }

  private static Buffer frame(String payload) {
    return LengthField.DEFAULT.frame(Buffer.buffer(payload));
  }

  private static void feedOneByteAtATime(FrameParser parser, Buffer bytes) {
    for (int i = 0; i < bytes.length(); i++) {
      parser.handle(bytes.getBuffer(i, i + 1));
    }
  }

  @Test
  void headerIsLittleEndian() {
    FrameParser p = parser(1024);
    p.handle(Buffer.buffer(new byte[] {3, 0, 0, 0, 'a', 'b', 'c'}));
    assertEquals(List.of(Buffer.buffer("abc")), frames);
  }

  @Test
  void framesFedOneByteAtATime() {
    FrameParser p = parser(1024);
    Buffer stream = Buffer.buffer().appendBuffer(frame("hello1")).appendBuffer(frame("")).appendBuffer(frame("hello3"));
    feedOneByteAtATime(p, stream);
    assertEquals(List.of(Buffer.buffer("hello1"), Buffer.buffer(), Buffer.buffer("hello3")), frames);
    assertTrue(p.atFrameBoundary());
    assertTrue(errors.isEmpty());
  }

  @Test
  void manyFramesInOneBuffer() {
    FrameParser p = parser(1 << 16);
    Random random = new Random(42);
    Buffer stream = Buffer.buffer();
    List<Buffer> expected = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      byte[] payload = new byte[random.nextInt(3000)];
      random.nextBytes(payload);
      expected.add(Buffer.buffer(payload));
      stream.appendBuffer(LengthField.DEFAULT.frame(Buffer.buffer(payload)));
    }
    p.handle(stream);
    assertEquals(expected, frames);
  }

  @Test
  void emptyFramesBackToBack() {
    FrameParser p = parser(16);
    p.handle(Buffer.buffer(new byte[12]));
    assertEquals(List.of(Buffer.buffer(), Buffer.buffer(), Buffer.buffer()), frames);
    assertTrue(p.atFrameBoundary());
  }

  @Test
  void frameOfExactlyMaxSizeIsAccepted() {
    FrameParser p = parser(1000);
    p.handle(LengthField.DEFAULT.frame(Buffer.buffer(new byte[1000])));
    assertEquals(List.of(Buffer.buffer(new byte[1000])), frames);
    assertTrue(errors.isEmpty());
  }

  @Test
  void oversizedHeaderStopsParsingAtOnce() {
    FrameParser p = parser(1000);
    Buffer stream = Buffer.buffer()
      .appendBuffer(frame("before"))
      .appendIntLE(1001)
      .appendBuffer(Buffer.buffer(new byte[1001]))
      .appendBuffer(frame("after"));
    p.handle(stream);
    assertEquals(List.of(Buffer.buffer("before")), frames, "nothing after the bad header is delivered");
    assertEquals(1, errors.size());
    FrameTooLargeException e = assertInstanceOf(FrameTooLargeException.class, errors.get(0));
    assertEquals(1001, e.length());
    assertEquals(1000, e.maxFrameSize());
    p.resume();
    assertEquals(1, frames.size(), "a failed parser cannot be resumed");
  }

  @Test
  void lengthIsComparedUnsigned() {
    FrameParser p = parser(Integer.MAX_VALUE);
    p.handle(Buffer.buffer(new byte[] {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF}));
    FrameTooLargeException e = assertInstanceOf(FrameTooLargeException.class, errors.get(0));
    assertEquals(0xFFFFFFFFL, e.length());
  }

  @Test
  void oversizedHeaderFedOneByteAtATimeIsCaughtBeforeAnyBody() {
    FrameParser p = parser(10);
    feedOneByteAtATime(p, Buffer.buffer().appendIntLE(11));
    assertEquals(1, errors.size());
  }

  @Test
  void pauseHoldsBufferedFramesUntilResume() {
    FrameParser[] holder = new FrameParser[1];
    onFrame = f -> {
      frames.add(f);
      holder[0].pause();
    };
    FrameParser p = parser(100);
    holder[0] = p;
    p.handle(Buffer.buffer().appendBuffer(frame("a")).appendBuffer(frame("b")).appendBuffer(frame("c")));
    assertEquals(1, frames.size());
    p.resume();
    assertEquals(2, frames.size());
    p.resume();
    assertEquals(List.of(Buffer.buffer("a"), Buffer.buffer("b"), Buffer.buffer("c")), frames);
  }

  @Test
  void afterEachFeedTheQueriesTellWhatIsHeldWhilePausedAndWhatIsUnderWay() {
    FrameParser[] holder = new FrameParser[1];
    onFrame = f -> {
      frames.add(f);
      if (frames.size() == 2) {
        holder[0].pause();
      }
    };
    FrameParser p = parser(100);
    holder[0] = p;
    p.handle(Buffer.buffer().appendBuffer(frame("a")).appendBuffer(frame("b")).appendBuffer(frame("c")));
    assertEquals(List.of(Buffer.buffer("a"), Buffer.buffer("b")), frames, "the read stops where the listener paused");
    assertEquals(5, p.bufferedBytes(), "the frame after the pause is held whole");
    assertFalse(p.atFrameBoundary());
    assertEquals(0, p.announcedFrameSize(), "a held frame's header is not decided while paused");
    p.handle(frame("d"));
    assertEquals(2, frames.size(), "nothing is delivered while paused");
    assertEquals(10, p.bufferedBytes(), "a read while paused is held on top");
    assertEquals(0, p.announcedFrameSize());
    p.resume();
    assertEquals(List.of(Buffer.buffer("a"), Buffer.buffer("b"), Buffer.buffer("c"), Buffer.buffer("d")), frames,
      "what was held is delivered on resume, in order");
    assertEquals(0, p.bufferedBytes());
    assertTrue(p.atFrameBoundary());
    Buffer split = frame("split");
    p.handle(split.getBuffer(0, 6));
    assertEquals(4, frames.size(), "a read without a whole frame delivers nothing");
    assertEquals(6, p.bufferedBytes());
    assertFalse(p.atFrameBoundary());
    assertEquals(9, p.announcedFrameSize(), "its header is whole: the frame's size is known");
    p.handle(split.getBuffer(6, split.length()));
    assertEquals(Buffer.buffer("split"), frames.get(4));
    assertEquals(0, p.bufferedBytes());
    assertTrue(p.atFrameBoundary());
    assertEquals(0, p.announcedFrameSize(), "nothing announced once the frame is delivered");
  }

  @Test
  void bigFramesSpanningReadsAreGatheredExactlyWhateverTheReadSizes() {
    FrameParser p = parser(4 * PartialFrame.PIECE_SIZE);
    Random random = new Random(7);
    int piece = PartialFrame.PIECE_SIZE;
    Buffer stream = Buffer.buffer();
    List<Buffer> expected = new ArrayList<>();
    for (int size : new int[] {piece - 4, 10, piece - 3, piece, 0, 3 * piece + 7, 1}) {
      byte[] payload = new byte[size];
      random.nextBytes(payload);
      expected.add(Buffer.buffer(payload));
      stream.appendBuffer(LengthField.DEFAULT.frame(Buffer.buffer(payload)));
    }
    // The first read ends inside the first header; the rest come in reads of up to 200,000 bytes.
    p.handle(stream.getBuffer(0, 2));
    for (int at = 2; at < stream.length(); ) {
      int end = Math.min(stream.length(), at + 1 + random.nextInt(200_000));
      p.handle(stream.getBuffer(at, end));
      at = end;
    }
    assertEquals(expected, frames);
    assertTrue(p.atFrameBoundary());
    assertTrue(errors.isEmpty());
  }

  @Test
  void boundaryTracksPartialHeaderAndBody() {
    FrameParser p = parser(100);
    assertTrue(p.atFrameBoundary());
    p.handle(Buffer.buffer(new byte[] {5, 0}));
    assertFalse(p.atFrameBoundary(), "inside a header");
    assertEquals(0, p.announcedFrameSize(), "inside a header nothing is announced yet");
    p.handle(Buffer.buffer(new byte[] {0, 0, 'x'}));
    assertFalse(p.atFrameBoundary(), "inside a body");
    assertEquals(9, p.announcedFrameSize());
    p.handle(Buffer.buffer("yzzz"));
    assertTrue(p.atFrameBoundary());
    assertEquals(0, p.announcedFrameSize());
    assertEquals(List.of(Buffer.buffer("xyzzz")), frames);
  }

  @Test
  void aFrameIsStartedFromItsFirstByteAndItsSizeAnnouncedBeforeItsBodyArrives() {
    FrameParser p = parser(100);
    p.handle(Buffer.buffer(new byte[] {2}));
    assertFalse(p.atFrameBoundary(), "one header byte starts a frame");
    assertEquals(1, p.bufferedBytes());
    assertEquals(0, p.announcedFrameSize(), "a part of a header announces nothing");
    p.handle(Buffer.buffer(new byte[] {0, 0}));
    assertFalse(p.atFrameBoundary());
    assertEquals(3, p.bufferedBytes(), "more bytes of the same frame");
    assertEquals(0, p.announcedFrameSize());
    p.handle(Buffer.buffer(new byte[] {0}));
    assertEquals(4 + 2, p.announcedFrameSize(), "the frame's size is known before its body's bytes");
    assertTrue(frames.isEmpty());
    // The rest of this frame, a whole empty frame, and the start of a third, in one read.
    p.handle(Buffer.buffer(new byte[] {'a', 'b', 0, 0, 0, 0, 7}));
    assertEquals(List.of(Buffer.buffer("ab"), Buffer.buffer()), frames);
    assertEquals(1, p.bufferedBytes());
    assertFalse(p.atFrameBoundary(), "the third frame has started");
    assertEquals(0, p.announcedFrameSize(), "its header is not whole yet");
    // Exactly the rest of the third frame: it is delivered and nothing new starts.
    p.handle(Buffer.buffer(new byte[] {0, 0, 0, 1, 2, 3, 4, 5, 6, 7}));
    assertEquals(Buffer.buffer(new byte[] {1, 2, 3, 4, 5, 6, 7}), frames.get(2));
    assertEquals(3, frames.size());
    assertTrue(p.atFrameBoundary());
    assertEquals(0, p.bufferedBytes());
    assertEquals(0, p.announcedFrameSize());
  }

  @Test
  void bufferedBytesCountWholeFramesHeldWhilePaused() {
    FrameParser p = parser(100);
    p.pause();
    p.handle(frame("abc"));
    assertTrue(frames.isEmpty());
    assertEquals(7, p.bufferedBytes());
    assertFalse(p.atFrameBoundary());
    assertEquals(0, p.announcedFrameSize(), "held bytes are not parsed while paused");
    p.resume();
    assertEquals(List.of(Buffer.buffer("abc")), frames);
    assertTrue(p.atFrameBoundary());
    assertEquals(0, p.bufferedBytes());
  }

  /**
   * The server's path: raw Netty buffers of pooled direct memory, frames received as {@link ByteBuf}s that the
   * listener owns. Every test ends with every buffer released, checked without waiting for the garbage
   * collector (see {@link #everyBufferIsReleased}).
   */
  /** Counts the capacity of every direct buffer asked for, to see what the parser sets aside. */
  private static final class CountingAllocator extends AbstractByteBufAllocator {
    long requested;

    CountingAllocator() {
      super(true);
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
      requested += initialCapacity;
      return new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity);
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
      requested += initialCapacity;
      return new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity);
    }

    @Override
    public boolean isDirectBufferPooled() {
      return false;
    }
  }

  /**
   * What the parser sets aside follows the bytes that arrived, not the length a header announces: a bare
   * header announcing 32 MiB costs next to nothing, and then at most about twice what came.
   */
  @Test
  void aHeaderAnnouncingABigFrameSetsMemoryAsideOnlyAsItsBytesArrive() {
    CountingAllocator alloc = new CountingAllocator();
    FrameParser p = parser(32 << 20);
    ByteBuf header = alloc.directBuffer(4).writeIntLE(32 << 20);
    long before = alloc.requested;
    p.handle(header);
    long forHeader = alloc.requested - before;
    assertTrue(forHeader <= 64, "a bare header set aside " + forHeader + " bytes");
    assertEquals(4 + (32 << 20), p.announcedFrameSize(), "the whole size is announced nonetheless");
    long received = 0;
    Random random = new Random(11);
    for (int read : new int[] {1, 1000, 65_536, 65_536, 200_000, 3}) {
      byte[] body = new byte[read];
      random.nextBytes(body);
      ByteBuf in = alloc.directBuffer(read).writeBytes(body);
      long inputBytes = read;
      before = alloc.requested;
      p.handle(in);
      received += read;
      long setAside = alloc.requested - before;
      assertTrue(setAside <= Math.max(2 * received, PartialFrame.MIN_PIECE) + inputBytes,
        "after " + received + " body bytes, one read set aside " + setAside + " bytes");
    }
    assertTrue(frames.isEmpty());
    p.releaseBuffers();
  }

  @Nested
  class OnPooledDirectBuffers {

    private static final int PIECE = PartialFrame.PIECE_SIZE;

    /**
     * Pooled direct memory like the reads Netty hands the server, from an allocator of the test's own with
     * its thread caches off, so that its count of live buffers is exact: the parser allocates from the
     * allocator of the bytes it is given, so its own buffers are counted too.
     */
    private final PooledByteBufAllocator alloc = new PooledByteBufAllocator(true, 0, 1, 8192, 9, 0, 0, false);
    /** Every buffer handed to the parser, each with one reference of the test's own on top of the parser's. */
    private final List<ByteBuf> inputs = new ArrayList<>();
    private final List<ByteBuf> received = new ArrayList<>();
    private final List<Throwable> failures = new ArrayList<>();
    private final List<Boolean> demand = new ArrayList<>();
    private Consumer<ByteBuf> onReceived = frame -> { };

    private final FrameParser.Listener listener = new FrameParser.Listener() {
      @Override
      public void frame(ByteBuf frame) {
        received.add(frame);
        onReceived.accept(frame);
      }

      @Override
      public void failed(Throwable error) {
        failures.add(error);
      }
    };

    private FrameParser parser(int maxFrameSize) {
      return FrameParser.controlling(demand::add, maxFrameSize, listener);
    }

    @AfterEach
    void everyBufferIsReleased() {
      received.forEach(ByteBuf::release);
      for (ByteBuf input : inputs) {
        input.release();
        assertEquals(0, input.refCnt(), "an input still referenced after the parser and the frames are done");
      }
      assertEquals(0, liveBuffers(), "buffers of the parser's never released");
    }

    /** A read of {@code bytes[from, to)} in pooled direct memory, handed to the parser. */
    private void feed(FrameParser parser, byte[] bytes, int from, int to) {
      ByteBuf input = alloc.directBuffer(to - from).writeBytes(bytes, from, to - from);
      inputs.add(input.retain());
      parser.handle(input);
    }

    private void feedOneByteAtATime(FrameParser parser, byte[] bytes) {
      for (int i = 0; i < bytes.length; i++) {
        feed(parser, bytes, i, i + 1);
      }
    }

    /** Feeds {@code bytes} in reads of 1 to {@code maxRead} bytes, cut where {@code random} says. */
    private void feedInRandomCuts(FrameParser parser, byte[] bytes, Random random, int maxRead) {
      for (int at = 0; at < bytes.length; ) {
        int end = Math.min(bytes.length, at + 1 + random.nextInt(maxRead));
        feed(parser, bytes, at, end);
        at = end;
      }
    }

    /** Frames of these payload sizes, back to back, with payload bytes from {@code random}. */
    private byte[] stream(Random random, int... payloadSizes) {
      ByteBuf stream = Unpooled.buffer();
      for (int size : payloadSizes) {
        byte[] payload = new byte[size];
        random.nextBytes(payload);
        LengthField.DEFAULT.writeHeader(stream, size).writeBytes(payload);
      }
      return ByteBufUtil.getBytes(stream);
    }

    /**
     * A paused connection keeps what its frame set aside: pieces follow what has arrived, never the length the header
     * announces, so no more than about as much again as arrived (or a smallest piece) is set aside.
     */
    @Test
    void piecesFollowWhatArrivedNotTheFrame() {
      PartialFrame frame = new PartialFrame(LengthField.DEFAULT);
      frame.start(ByteBufAllocator.DEFAULT, 1 << 21);
      long arrived = 0;
      for (int read : new int[] {1, 7, 10_000, 131_076, 65_535, 300_000}) {
        ByteBuf in = Unpooled.wrappedBuffer(new byte[read]);
        assertFalse(frame.fill(in), "the frame is not whole yet");
        in.release();
        arrived += read;
        assertTrue(frame.setAsideBytes() <= Math.max(arrived, PartialFrame.MIN_PIECE),
          "after " + arrived + " bytes: " + frame.setAsideBytes());
      }
      frame.release();
    }

    /** A large frame copied from small reads (over TLS, every read) is written as few pieces: they double up to 1 MiB. */
    @Test
    void aLargeFrameFromSmallReadsIsFewPieces() {
      PartialFrame frame = new PartialFrame(LengthField.DEFAULT);
      int size = 4 << 20;
      frame.start(ByteBufAllocator.DEFAULT, size);
      boolean whole = false;
      for (int at = 0; at < size; at += 16_384) {
        ByteBuf in = Unpooled.wrappedBuffer(new byte[16_384]);
        whole = frame.fill(in);
        in.release();
      }
      assertTrue(whole);
      ByteBuf taken = frame.take();
      assertTrue(((CompositeByteBuf) taken).numComponents() <= 12, "pieces: " + ((CompositeByteBuf) taken).numComponents());
      taken.release();
    }

    /** The frames received equal {@code stream}'s, header and payload, in order. */
    private void assertReceivedAre(byte[] stream, String why) {
      int at = 0;
      int i = 0;
      while (at < stream.length) {
        int frameSize = LengthField.DEFAULT.headerSize() + (int) LengthField.DEFAULT.readLength(Unpooled.wrappedBuffer(stream), at);
        assertTrue(i < received.size(), why + ": frame " + i + " missing");
        assertArrayEquals(Arrays.copyOfRange(stream, at, at + frameSize), ByteBufUtil.getBytes(received.get(i)),
          why + ": frame " + i);
        at += frameSize;
        i++;
      }
      assertEquals(i, received.size(), why + ": frames");
    }

    @Test
    void wholeFramesInOneReadAreSlicesOfItNotCopies() {
      FrameParser p = parser(1 << 16);
      byte[] bytes = stream(new Random(1), 5, 0, 3000, 0, 1);
      feed(p, bytes, 0, bytes.length);
      assertReceivedAre(bytes, "one read");
      ByteBuf input = inputs.get(0);
      int offset = 0;
      for (ByteBuf frame : received) {
        // The frame shares the read's memory: a byte written into the read shows in the frame.
        input.setByte(offset, 0x5A);
        assertEquals(0x5A, frame.getByte(frame.readerIndex()), "frame at " + offset + " is a slice of the read");
        offset += frame.readableBytes();
      }
      assertEquals(1 + received.size(), input.refCnt(), "the test's reference and one per frame: the parser let go of the read");
      assertTrue(p.atFrameBoundary());
      assertEquals(0, p.bufferedBytes(), "nothing kept: every frame was handed over");
      assertEquals(0, p.announcedFrameSize());
    }

    @Test
    void smallFramesThatSpanReadsAreGatheredIntoOneBufferOfTheirSize() {
      FrameParser p = parser(4 * PIECE);
      Random random = new Random(2);
      byte[] bytes = stream(random, PartialFrame.SMALL_FRAME - LengthField.DEFAULT.headerSize(), 3000, 1);
      feedInRandomCuts(p, bytes, random, 2_000);
      assertReceivedAre(bytes, "seed 2");
      for (ByteBuf frame : received) {
        assertFalse(frame instanceof CompositeByteBuf, "one buffer");
        assertEquals(frame.readableBytes(), frame.capacity(), "of exactly the frame's size");
      }
    }

    @Test
    void biggerFramesAreGatheredInFullPiecesOfAtMostOneMiB() {
      for (long seed = 1; seed <= 3; seed++) {
        FrameParser p = parser(4 * PIECE);
        Random random = new Random(seed);
        // 3.5 MiB, then one byte over a piece, with small frames around them.
        byte[] bytes = stream(random, 10, 7 * PIECE / 2, 0, PIECE - LengthField.DEFAULT.headerSize() + 1, 3);
        feedInRandomCuts(p, bytes, random, 300_000);
        assertReceivedAre(bytes, "seed " + seed);
        for (int f : new int[] {1, 3}) {
          CompositeByteBuf big = assertInstanceOf(CompositeByteBuf.class, received.get(f), "seed " + seed);
          for (int i = 0; i < big.numComponents(); i++) {
            ByteBuf piece = big.internalComponent(i);
            assertTrue(piece.readableBytes() <= PIECE, "seed " + seed + ": piece " + i + " over 1 MiB");
            assertEquals(piece.capacity(), piece.readableBytes(), "seed " + seed + ": piece " + i + " is full");
          }
        }
        assertTrue(p.atFrameBoundary(), "seed " + seed);
        received.forEach(ByteBuf::release);
        received.clear();
      }
    }

    /**
     * As the server's socket reads: before each read it asks where the read may land; the kernel's bytes go there
     * (or into a buffer of the read's own), and that buffer is handed to the parser; now and then a lent read takes
     * nothing and is released unread, as Netty does with a read that found the socket empty.
     */
    private int feedLanding(FrameParser parser, byte[] bytes, Random random, int guess) {
      int landed = 0;
      for (int at = 0; at < bytes.length; ) {
        int most = 1 + random.nextInt(3 * PIECE / 2);
        ByteBuf into = parser.landingFor(alloc, guess, most);
        if (into != null && random.nextInt(6) == 0) {
          into.release();
          continue;
        }
        if (into == null) {
          into = alloc.directBuffer(guess);
        } else {
          assertTrue(into.writableBytes() <= most, "a landing takes at most what the read may");
          landed++;
        }
        int n = Math.min(into.writableBytes(), Math.min(bytes.length - at, 1 + random.nextInt(into.writableBytes())));
        into.writeBytes(bytes, at, n);
        at += n;
        parser.handle(into);
      }
      return landed;
    }

    @Test
    void readsOfALargeFrameLandInItsMemoryInOrderWhateverTheirSizes() {
      for (long seed = 1; seed <= 6; seed++) {
        FrameParser p = parser(4 * PIECE);
        Random random = new Random(seed);
        byte[] bytes = stream(random, 10, 7 * PIECE / 2, 0, 70_000, PIECE - LengthField.DEFAULT.headerSize() + 1, 3, 20_000);
        int landed = feedLanding(p, bytes, random, 1 + random.nextInt(65_536));
        assertReceivedAre(bytes, "seed " + seed);
        assertTrue(landed > 0, "seed " + seed + ": reads landed in a frame");
        assertTrue(p.atFrameBoundary(), "seed " + seed);
        received.forEach(ByteBuf::release);
        received.clear();
      }
    }

    /**
     * Only a large frame that lacks a read's guess or more lends its memory: a read of its own would otherwise take
     * fewer bytes than an ordinary one, which takes the next frames too; nor while the parser is paused.
     */
    @Test
    void onlyALargeFrameLackingAWholeReadLendsItsMemory() {
      FrameParser p = parser(4 * PIECE);
      byte[] bytes = stream(new Random(5), 10_000, PIECE);
      assertEquals(null, p.landingFor(alloc, 1, PIECE), "between frames");
      feed(p, bytes, 0, 5_000);
      assertEquals(null, p.landingFor(alloc, 1, PIECE), "a small frame is gathered into one buffer of its size");
      feed(p, bytes, 5_000, 10_004 + 100_000);
      assertEquals(null, p.landingFor(alloc, PIECE, PIECE), "the large frame lacks less than the guess");
      p.pause();
      assertEquals(null, p.landingFor(alloc, 1, PIECE), "paused");
      p.resume();
      ByteBuf lent = p.landingFor(alloc, 65_536, PIECE);
      assertTrue(lent != null && lent.writableBytes() <= PIECE, "lacking a whole read");
      lent.release();
      feed(p, bytes, 10_004 + 100_000, bytes.length);
      assertReceivedAre(bytes, "whole");
    }

    /**
     * While a large frame lacks more than a piece, a landed read takes no more than an ordinary read would (the
     * read's guess): larger ones were slower with 32 MiB frames; the frame's last piece's worth may land in fewer,
     * larger reads (a 1 MiB frame is nearly all last piece), never more than the budget's cap allows.
     */
    @Test
    void aLandedReadTakesTheGuessUntilTheFramesLastPiece() {
      FrameParser p = parser(4 * PIECE);
      byte[] bytes = stream(new Random(7), 3 * PIECE);
      int guess = 65_536;
      int most = 3 * PIECE / 4;
      int largestBefore = 0;
      int largestInLastPiece = 0;
      feed(p, bytes, 0, guess);
      for (int at = guess; at < bytes.length; ) {
        ByteBuf into = p.landingFor(alloc, guess, most);
        if (into == null) {
          int end = Math.min(bytes.length, at + guess);
          feed(p, bytes, at, end);
          at = end;
          continue;
        }
        int n = into.writableBytes();
        if (bytes.length - at > PIECE) {
          largestBefore = Math.max(largestBefore, n);
        } else {
          largestInLastPiece = Math.max(largestInLastPiece, n);
        }
        into.writeBytes(bytes, at, n);
        at += n;
        p.handle(into);
      }
      assertReceivedAre(bytes, "whole");
      assertTrue(largestBefore > 0 && largestBefore <= guess, "before the last piece: " + largestBefore);
      assertTrue(largestInLastPiece > guess && largestInLastPiece <= most, "in the last piece: " + largestInLastPiece);
    }

    /**
     * Were reads ever handed over out of the order they were made in, the lent read's bytes would still not be
     * overwritten: a read that comes while a lent one is alive starts a new piece, and the lent one, when it comes,
     * is copied like any read.
     */
    @Test
    void aReadThatComesBeforeTheLentOneIsNotCopiedOverIt() {
      FrameParser p = parser(4 * PIECE);
      byte[] bytes = stream(new Random(11), 3 * PIECE);
      feed(p, bytes, 0, 200_000);
      ByteBuf lent = p.landingFor(alloc, 1, 100_000);
      assertTrue(lent != null, "a large frame under way lends its memory");
      // The stream's next bytes come in an ordinary read; the lent read holds the ones after them.
      int n = lent.writableBytes();
      lent.writeBytes(bytes, 250_000, n);
      feed(p, bytes, 200_000, 250_000);
      p.handle(lent);
      feed(p, bytes, 250_000 + n, bytes.length);
      assertReceivedAre(bytes, "out of order, yet whole");
    }

    @Test
    void framesFedOneByteAtATime() {
      FrameParser p = parser(1 << 16);
      byte[] bytes = stream(new Random(3), 6, 0, 1, 0, 0, 300);
      // After every byte the queries follow the frame under way: inside its header nothing is announced; once
      // the header is whole its size is, until the frame is delivered (at once, for an empty one).
      int frameStart = 0;
      int delivered = 0;
      for (int i = 0; i < bytes.length; i++) {
        feed(p, bytes, i, i + 1);
        int intoFrame = i + 1 - frameStart;
        String at = "after byte " + i;
        if (intoFrame < LengthField.DEFAULT.headerSize()) {
          assertEquals(delivered, received.size(), at + ": no new frame inside a header");
          assertEquals(0, p.announcedFrameSize(), at + ": inside a header");
          assertFalse(p.atFrameBoundary(), at);
          assertEquals(intoFrame, p.bufferedBytes(), at);
          continue;
        }
        int frameSize = LengthField.DEFAULT.headerSize() + (int) LengthField.DEFAULT.readLength(Unpooled.wrappedBuffer(bytes), frameStart);
        if (intoFrame < frameSize) {
          assertEquals(delivered, received.size(), at + ": no new frame before its last byte");
          assertEquals(frameSize, p.announcedFrameSize(), at + ": header whole, body under way");
          assertFalse(p.atFrameBoundary(), at);
          assertEquals(intoFrame, p.bufferedBytes(), at);
        } else {
          delivered++;
          assertEquals(delivered, received.size(), at + ": the frame is delivered at its last byte");
          assertEquals(0, p.announcedFrameSize(), at + ": delivered");
          assertTrue(p.atFrameBoundary(), at);
          assertEquals(0, p.bufferedBytes(), at);
          frameStart = i + 1;
        }
      }
      assertEquals(6, delivered);
      assertReceivedAre(bytes, "one byte at a time");
    }

    @Test
    void framesFedInRandomCuts() {
      for (long seed = 1; seed <= 20; seed++) {
        FrameParser p = parser(1 << 16);
        Random random = new Random(seed);
        int[] sizes = random.ints(40, 0, 5000).map(n -> n % 4 == 0 ? 0 : n).toArray();
        byte[] bytes = stream(random, sizes);
        feedInRandomCuts(p, bytes, random, 1 + random.nextInt(9000));
        assertReceivedAre(bytes, "seed " + seed);
        assertTrue(p.atFrameBoundary(), "seed " + seed);
        received.forEach(ByteBuf::release);
        received.clear();
      }
    }

    @Test
    void aZeroLengthFrameWhoseHeaderSpansReadsIsDeliveredAtItsLastHeaderByte() {
      FrameParser p = parser(100);
      byte[] bytes = stream(new Random(4), 0);
      feed(p, bytes, 0, 3);
      assertTrue(received.isEmpty());
      assertFalse(p.atFrameBoundary());
      assertEquals(0, p.announcedFrameSize(), "inside a header");
      feed(p, bytes, 3, 4);
      assertReceivedAre(bytes, "split empty frame");
      assertEquals(0, p.announcedFrameSize(), "nothing left announced: the empty frame went out with its header");
      assertTrue(p.atFrameBoundary());
      assertEquals(0, p.bufferedBytes());
    }

    @Test
    void pauseHoldsFramesUntilResumeInOrderAndTurnsTheSourceOffAndOn() {
      for (long seed = 1; seed <= 5; seed++) {
        FrameParser p = parser(4 * PIECE);
        Random random = new Random(seed);
        // Every frame pauses the parser; the frames received meanwhile wait for resume().
        onReceived = frame -> p.pause();
        byte[] bytes = stream(random, 0, 12, 2 * PIECE, 0, 500, 30_000, 1);
        feedInRandomCuts(p, bytes, random, 700_000);
        int resumes = 0;
        while (received.size() < 7 && resumes < 100) {
          int before = received.size();
          assertEquals(List.of(false), demand.subList(demand.size() - 1, demand.size()), "seed " + seed + ": paused, reading off");
          p.resume();
          resumes++;
          assertEquals(before + 1, received.size(), "seed " + seed + ": one frame per resume, the listener pausing at each");
        }
        assertReceivedAre(bytes, "seed " + seed);
        onReceived = frame -> { };
        p.resume();
        assertEquals(true, demand.get(demand.size() - 1), "seed " + seed + ": resumed with nothing held, reading on");
        for (int i = 1; i < demand.size(); i++) {
          assertFalse(demand.get(i - 1) && demand.get(i), "seed " + seed + ": never turned on twice in a row");
        }
        assertTrue(p.atFrameBoundary(), "seed " + seed);
        received.forEach(ByteBuf::release);
        received.clear();
        demand.clear();
      }
    }

    @Test
    void bytesReceivedWhilePausedAreParsedOnlyOnResumeAndAllAtOnce() {
      FrameParser p = parser(100);
      byte[] bytes = stream(new Random(5), 3, 0, 4);
      p.pause();
      feedOneByteAtATime(p, bytes);
      assertTrue(received.isEmpty(), "nothing delivered while paused");
      assertEquals(0, p.announcedFrameSize(), "nothing parsed while paused: no header decided");
      assertEquals(bytes.length, p.bufferedBytes());
      assertFalse(p.atFrameBoundary());
      p.resume();
      assertReceivedAre(bytes, "held bytes parsed at once on resume");
      assertEquals(0, p.bufferedBytes());
      assertTrue(p.atFrameBoundary());
      assertEquals(List.of(false, true), demand);
    }

    /**
     * An owner that pauses on what a header announced (to wait for memory, say), as it learns it from
     * {@link FrameParser#announcedFrameSize()} after a read: the body bytes that come while paused are held
     * raw, neither gathered nor delivered, until resume.
     */
    @Test
    void pausingOnceAHeaderIsAnnouncedHoldsTheRestOfTheBodyUntilResume() {
      FrameParser p = parser(1 << 20);
      byte[] bytes = stream(new Random(6), 1000, 2000);
      feed(p, bytes, 0, 2);
      assertEquals(0, p.announcedFrameSize(), "half a header");
      feed(p, bytes, 2, 600);
      assertEquals(1004, p.announcedFrameSize(), "the header is whole");
      p.pause();
      assertEquals(List.of(false), demand, "reading turned off");
      long liveWhenPaused = liveBuffers() - inputs.size();
      feed(p, bytes, 600, 1004);
      feed(p, bytes, 1004, bytes.length);
      assertTrue(received.isEmpty(), "the rest of the body, and the next frame, are held while paused");
      assertEquals(bytes.length, p.bufferedBytes());
      assertEquals(1004, p.announcedFrameSize(), "still the first frame's, not the held second header's");
      assertEquals(liveWhenPaused, liveBuffers() - inputs.size(), "held bytes are kept as they came: nothing set aside for them");
      p.resume();
      assertReceivedAre(bytes, "after the pause");
      assertEquals(0, p.announcedFrameSize());
      assertEquals(0, p.bufferedBytes());
      assertTrue(p.atFrameBoundary());
      assertEquals(List.of(false, true), demand);
    }

    private long liveBuffers() {
      return alloc.metric().directArenas().stream().mapToLong(PoolArenaMetric::numActiveAllocations).sum();
    }

    @Test
    void aFrameOfExactlyTheMaximumIsAcceptedAndOneByteMoreIsRefusedBeforeAnyBody() {
      FrameParser p = parser(1000);
      byte[] bytes = stream(new Random(7), 1000);
      feedInRandomCuts(p, bytes, new Random(7), 300);
      assertReceivedAre(bytes, "the maximum, cut with seed 7");
      assertTrue(failures.isEmpty());
      received.forEach(ByteBuf::release);
      received.clear();

      byte[] tooBig = stream(new Random(7), 1001);
      feedOneByteAtATime(p, Arrays.copyOf(tooBig, 4));
      FrameTooLargeException e = assertInstanceOf(FrameTooLargeException.class, failures.get(0));
      assertEquals(1001, e.length());
      assertEquals(List.of(false), demand, "reading turned off");
      assertEquals(inputs.size(), liveBuffers(), "nothing kept but the inputs");
      feed(p, tooBig, 4, tooBig.length);
      assertTrue(received.isEmpty(), "a failed parser delivers nothing more");
      assertEquals(1, failures.size());
    }

    @Test
    void theLargestUnsignedLengthIsRefusedAsSuch() {
      FrameParser p = parser(Integer.MAX_VALUE);
      feed(p, new byte[] {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 1, 2}, 0, 6);
      FrameTooLargeException e = assertInstanceOf(FrameTooLargeException.class, failures.get(0));
      assertEquals(0xFFFFFFFFL, e.length());
      assertEquals(1, failures.size());
      assertTrue(received.isEmpty());
      assertEquals(0, p.announcedFrameSize(), "a refused header announces nothing");
      assertEquals(inputs.size(), liveBuffers(), "nothing kept but the inputs: no body buffer for it");
    }

    @Test
    void releaseBuffersMidFrameReleasesTheHeaderPartTheFramePartAndHeldBytes() {
      int[][] cuts = {{2}, {4 + 500}, {4 + PIECE + 10}, {3, 4 + 2 * PIECE}};
      for (int[] cut : cuts) {
        FrameParser p = parser(4 * PIECE);
        byte[] bytes = stream(new Random(8), 3 * PIECE);
        int at = 0;
        for (int end : cut) {
          feed(p, bytes, at, end);
          at = end;
        }
        p.pause();
        feed(p, bytes, at, at + 100);
        assertTrue(p.bufferedBytes() > 0);
        p.releaseBuffers();
        assertEquals(inputs.size(), liveBuffers(), "cut at " + Arrays.toString(cut) + ": only the inputs are live");
        assertTrue(received.isEmpty());
      }
    }

    @Test
    void framesPayloadCopiesThePayloadOutAndReleasesTheFrame() {
      List<Buffer> payloads = new ArrayList<>();
      List<ByteBuf> given = new ArrayList<>();
      FrameParser p = FrameParser.standalone(100, new FrameParser.Listener() {
        @Override
        public void frame(ByteBuf frame) {
          given.add(frame);
          payloads.add(LengthField.DEFAULT.message(frame));
        }

        @Override
        public void failed(Throwable error) {
          failures.add(error);
        }
      });
      byte[] bytes = stream(new Random(9), 3, 0, 40);
      feedInRandomCuts(p, bytes, new Random(9), 5);
      assertTrue(failures.isEmpty());
      assertEquals(List.of(3, 0, 40), payloads.stream().map(Buffer::length).toList());
      assertEquals(Buffer.buffer(Arrays.copyOfRange(bytes, 4, 4 + 3)), payloads.get(0));
      assertEquals(Buffer.buffer(Arrays.copyOfRange(bytes, 4 + 3 + 4 + 4, bytes.length)), payloads.get(2));
      assertEquals(3, given.size());
      for (ByteBuf frame : given) {
        assertEquals(0, frame.refCnt(), "the frame is released once its payload is copied out");
      }
    }

    @Test
    void framesPayloadIsACopyNotAViewOfTheFrame() {
      byte[] bytes = stream(new Random(10), 5);
      ByteBuf frame = alloc.directBuffer(bytes.length).writeBytes(bytes);
      frame.retain();
      Buffer payload = LengthField.DEFAULT.message(frame);
      assertEquals(1, frame.refCnt(), "payload() let go of its reference");
      assertEquals(Buffer.buffer(Arrays.copyOfRange(bytes, 4, bytes.length)), payload);
      frame.setByte(LengthField.DEFAULT.headerSize(), bytes[LengthField.DEFAULT.headerSize()] + 1);
      assertEquals(bytes[LengthField.DEFAULT.headerSize()], payload.getByte(0), "the payload does not share the frame's memory");
      frame.release();
    }
  }
}
