package io.frameecho.protocol;

import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FrameParserTest {

  private final List<Buffer> frames = new ArrayList<>();
  private final List<Throwable> errors = new ArrayList<>();
  private final List<Integer> announced = new ArrayList<>();
  private int started;
  /** What the listener saw, in order: "f" per frame, "|" when the parser said it had parsed what it was given. */
  private final StringBuilder events = new StringBuilder();
  private java.util.function.Consumer<Buffer> onFrame = frames::add;

  private FrameParser parser(int maxFrameSize) {
    return FrameParser.standalone(maxFrameSize, new FrameParser.Listener() {
      @Override
      public void frame(Buffer payload) {
        events.append('f');
        onFrame.accept(payload);
      }

      @Override
      public void parsed() {
        events.append('|');
      }

      @Override
      public void failed(Throwable error) {
        errors.add(error);
      }

      @Override
      public void frameStarted() {
        started++;
      }

      @Override
      public void bodyAnnounced(int length) {
        announced.add(length);
      }
    });
  }

  private static Buffer frame(String payload) {
    return Frames.frame(Buffer.buffer(payload));
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
      stream.appendBuffer(Frames.frame(Buffer.buffer(payload)));
    }
    p.handle(stream);
    assertEquals(expected, frames);
  }

  @Test
  void emptyFramesBackToBack() {
    FrameParser p = parser(16);
    p.handle(Buffer.buffer(new byte[12]));
    assertEquals(3, frames.size());
    assertEquals(0, frames.get(2).length());
    assertTrue(p.atFrameBoundary());
  }

  @Test
  void frameOfExactlyMaxSizeIsAccepted() {
    FrameParser p = parser(1000);
    p.handle(Frames.frame(Buffer.buffer(new byte[1000])));
    assertEquals(1, frames.size());
    assertEquals(1000, frames.get(0).length());
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
  void parsedFollowsTheFramesOfEachBufferAndWaitsWhilePaused() {
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
    assertEquals("ff|", events.toString(), "one signal after the frames of a buffer, also when it stops early");
    p.handle(frame("d"));
    assertEquals("ff|", events.toString(), "nothing is parsed while paused");
    p.resume();
    assertEquals("ff|ff|", events.toString(), "what was held is parsed on resume, then signalled once");
    Buffer split = frame("split");
    p.handle(split.getBuffer(0, 6));
    p.handle(split.getBuffer(6, split.length()));
    assertEquals("ff|ff||f|", events.toString(), "a buffer without a whole frame is signalled too");
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
      stream.appendBuffer(Frames.frame(Buffer.buffer(payload)));
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
    p.handle(Buffer.buffer(new byte[] {0, 0, 'x'}));
    assertFalse(p.atFrameBoundary(), "inside a body");
    p.handle(Buffer.buffer("yzzz"));
    assertTrue(p.atFrameBoundary());
    assertEquals(List.of(Buffer.buffer("xyzzz")), frames);
  }

  @Test
  void frameStartsAreReportedOncePerFrameAndBodiesAnnouncedBeforeTheyArrive() {
    FrameParser p = parser(100);
    p.handle(Buffer.buffer(new byte[] {2}));
    assertEquals(1, started, "one header byte starts a frame");
    p.handle(Buffer.buffer(new byte[] {0, 0}));
    assertEquals(1, started, "more bytes of the same frame do not start another");
    p.handle(Buffer.buffer(new byte[] {0}));
    assertEquals(List.of(2), announced, "the body's length is known before its bytes");
    // The rest of this frame, a whole empty frame, and the start of a third, in one read.
    p.handle(Buffer.buffer(new byte[] {'a', 'b', 0, 0, 0, 0, 7}));
    assertEquals(2, started);
    assertEquals(List.of(Buffer.buffer("ab"), Buffer.buffer()), frames);
    assertEquals(1, p.bufferedBytes());
    // Exactly the rest of the third frame: nothing new starts.
    p.handle(Buffer.buffer(new byte[] {0, 0, 0, 1, 2, 3, 4, 5, 6, 7}));
    assertEquals(2, started);
    assertTrue(p.atFrameBoundary());
    assertEquals(0, p.bufferedBytes());
  }

  @Test
  void bufferedBytesCountWholeFramesHeldWhilePaused() {
    FrameParser p = parser(100);
    p.pause();
    p.handle(frame("abc"));
    assertTrue(frames.isEmpty());
    assertEquals(7, p.bufferedBytes());
    assertFalse(p.atFrameBoundary());
    p.resume();
    assertEquals(List.of(Buffer.buffer("abc")), frames);
    assertTrue(p.atFrameBoundary());
  }
}
