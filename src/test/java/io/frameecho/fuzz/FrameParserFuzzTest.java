package io.frameecho.fuzz;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.frameecho.protocol.FrameParser;
import io.frameecho.protocol.FrameTooLargeException;
import io.frameecho.protocol.FrameTooShortException;
import io.frameecho.protocol.LengthField;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PoolArenaMetric;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.BeforeAll;

import java.io.ByteArrayOutputStream;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Coverage-guided fuzzing of {@link FrameParser} against {@link Reference}, a decoder of a few lines written
 * from the wire format alone.
 * <p>
 * The fuzzer writes a plan: reads of arbitrary bytes cut anywhere (with, now and then, a well-formed frame, a
 * frame past {@code PartialFrame}'s small-frame size gathered in pieces, or a header just past the maximum),
 * pauses and resumes between reads and from inside the listener, a {@code maxFrameSize} mostly from 1 to 64.
 * The reads are pooled direct buffers (now and then a Vert.x buffer, which the parser copies), from an
 * allocator of the test's own with its thread caches off, so its count of live buffers is exact (the parser
 * allocates from the allocator of the bytes it is given). After every step the parser must have delivered
 * exactly the frames (bytes, header included) and the failure ({@link FrameTooLargeException}, same length)
 * that the reference finds in the bytes fed so far, unless it is paused; nothing else, nothing after a failure,
 * nothing while paused; its demand follows its pauses. At the end, the stream let through (or abandoned as it
 * stands, as when a connection goes), its byte counts match the reference, frames kept until then still hold
 * their bytes, every read is released and no pooled buffer is live. Netty's leak detection is paranoid (set
 * here as well as in the build), and a leak it reports in a buffer of this test fails the next run.
 * <p>
 * {@link #formsMatchReference} does the same for a header form ({@link LengthField}) the input picks first: a length
 * field of 1, 2, 3, 4 or 8 bytes in either order, after an offset, with an adjustment (negative ones make
 * {@link FrameTooShortException}s), the header stripped or kept (which the parser's frames do not show).
 * <p>
 * Without {@code JAZZER_FUZZ} this runs the inputs checked in under {@code FrameParserFuzzTestInputs/} as
 * regression tests; the build's fuzzing executions fuzz it for a bounded time (src/docs/DESIGN.md, "Fuzzing"). An input is
 * bytes that {@link #plan} reads: changing how it reads them changes what the checked-in inputs mean.
 */
class FrameParserFuzzTest {

  /** {@code PartialFrame.SMALL_FRAME}: frames above it are gathered in pieces. */
  private static final int SMALL_FRAME = 16 << 10;
  /** {@code PartialFrame.PIECE_SIZE}: the largest piece. */
  private static final int PIECE_SIZE = 1 << 20;
  /** Bytes of generated large frames one input may ask for, so that an execution stays short. */
  private static final int LARGE_BYTES_PER_INPUT = PIECE_SIZE + 8 * SMALL_FRAME;
  private static final int MAX_STEPS = 256;

  /**
   * The maximum sizes worth trying besides 1 to 64: around the parser's own thresholds, and the largest the
   * configuration allows, above {@link LengthField#largestBody()}, which the parser applies instead (see
   * {@link FrameParserFindingsTest}).
   */
  private static final int[] LARGE_MAX_FRAME_SIZES = {
    SMALL_FRAME - 5, SMALL_FRAME - 4, SMALL_FRAME - 3, PIECE_SIZE, PIECE_SIZE + 5, LengthField.DEFAULT_MAX_FRAME_SIZE,
    LengthField.DEFAULT.largestBody(), Integer.MAX_VALUE};

  private static final PooledByteBufAllocator ALLOC = new PooledByteBufAllocator(true, 0, 1, 8192, 9, 0, 0, false);

  /** Leaks Netty reported in buffers this test made (or the parser made while this test fed it). */
  private static final Queue<String> LEAKS = new ConcurrentLinkedQueue<>();

  @BeforeAll
  static void paranoidLeakDetection() {
    ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    ByteBufUtil.setLeakListener((type, records) -> {
      if (records != null && records.contains(FrameParserFuzzTest.class.getName())) {
        LEAKS.add(records);
      }
    });
  }

  /** One thing the owner does: feed a read, pause or resume. */
  private sealed interface Step permits Feed, Pause, Resume {
  }

  /**
   * A read: a pooled direct buffer with {@code offset} bytes of junk before the read's (so that its reader index
   * is not 0), or, when {@code offset} is negative, a Vert.x buffer (which the parser copies).
   */
  private record Feed(byte[] bytes, int offset) implements Step {
  }

  private record Pause() implements Step {
  }

  private record Resume() implements Step {
  }

  /**
   * The fuzzer's plan: the maximum, the steps, the frames the listener pauses on or keeps to the end, and whether
   * the stream is abandoned at the end as it stands (the connection gone, perhaps while paused) rather than let
   * through to its end.
   */
  private record Plan(LengthField form, int maxFrameSize, List<Step> steps, boolean[] pauseOnFrame, boolean[] keepFrame,
                      boolean abandon, byte[] stream) {
  }

  @FuzzTest(maxDuration = "30s")
  void parserMatchesReference(FuzzedDataProvider data) {
    Plan plan = plan(LengthField.DEFAULT, data);
    new Run(plan).check();
  }

  @FuzzTest(maxDuration = "30s")
  void formsMatchReference(FuzzedDataProvider data) {
    LengthField form = LengthField.of(data.pickValue(new int[] {1, 2, 3, 4, 8}),
        data.consumeBoolean() ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN)
      .withLengthFieldOffset(data.consumeInt(0, 3))
      .withStripHeader(data.consumeBoolean());
    int headerSize = form.headerSize();
    form = form.withLengthAdjustment(data.consumeInt(-headerSize - 2, 3));
    new Run(plan(form, data)).check();
  }

  private static Plan plan(LengthField form, FuzzedDataProvider data) {
    int maxFrameSize = data.consumeBoolean()
      ? data.consumeInt(1, 64)
      : data.pickValue(LARGE_MAX_FRAME_SIZES);
    boolean abandon = data.consumeInt(0, 7) == 0;
    // Indexes of frames (the first 64: enough for the fuzzer to find what pausing and keeping do).
    boolean[] pauseOnFrame = new boolean[64];
    boolean[] keepFrame = new boolean[64];
    List<Step> steps = new ArrayList<>();
    ByteArrayOutputStream stream = new ByteArrayOutputStream();
    int largeBytes = 0;
    while (data.remainingBytes() > 0 && steps.size() < MAX_STEPS) {
      int kind = data.consumeInt(0, 15);
      switch (kind) {
        case 0, 1, 2, 3, 4, 5, 6 -> feed(steps, stream, data.consumeBytes(data.consumeInt(0, 40)), data);
        case 7 -> {
          // A well-formed frame, cut in two.
          int length = data.consumeInt(0, 80);
          byte[] frame = frame(form, length, data.consumeBytes(length));
          int cut = data.consumeInt(0, frame.length);
          feed(steps, stream, Arrays.copyOfRange(frame, 0, cut), data);
          feed(steps, stream, Arrays.copyOfRange(frame, cut, frame.length), data);
        }
        case 8 -> {
          // A frame gathered in pieces (or a part of one: its announced length may exceed what is sent).
          int length = switch (data.consumeInt(0, 3)) {
            case 0, 1 -> data.consumeInt(SMALL_FRAME - 8, SMALL_FRAME + 8);
            case 2 -> data.consumeInt(SMALL_FRAME, 4 * SMALL_FRAME);
            // Past the largest piece.
            default -> data.consumeInt(PIECE_SIZE - 8, PIECE_SIZE + 4 * SMALL_FRAME);
          };
          int sent = Math.min(form.headerSize() + length, data.consumeBoolean() ? Integer.MAX_VALUE : data.consumeInt(0, 64 << 10));
          if (largeBytes + sent > LARGE_BYTES_PER_INPUT) {
            break;
          }
          largeBytes += sent;
          byte[] frame = frame(form, length, pattern(length, data.consumeByte()));
          int reads = data.consumeInt(1, 8);
          int at = 0;
          for (int i = 1; i <= reads && at < sent; i++) {
            int end = i == reads ? sent : Math.min(sent, at + data.consumeInt(0, Math.max(0, sent - at)));
            feed(steps, stream, Arrays.copyOfRange(frame, at, end), data);
            at = end;
          }
        }
        case 9 -> {
          // A header announcing just over the maximum, or just at it.
          long announced = (long) maxFrameSize + data.consumeInt(0, 2) - form.lengthAdjustment();
          feed(steps, stream, header(form, announced), data);
        }
        case 10, 11 -> steps.add(new Pause());
        case 12, 13 -> steps.add(new Resume());
        case 14 -> pauseOnFrame[data.consumeInt(0, pauseOnFrame.length - 1)] = true;
        default -> keepFrame[data.consumeInt(0, keepFrame.length - 1)] = true;
      }
    }
    return new Plan(form, maxFrameSize, steps, pauseOnFrame, keepFrame, abandon, stream.toByteArray());
  }

  private static void feed(List<Step> steps, ByteArrayOutputStream stream, byte[] bytes, FuzzedDataProvider data) {
    steps.add(new Feed(bytes, data.consumeBoolean() ? 0 : data.consumeInt(-1, 7)));
    stream.writeBytes(bytes);
  }

  /**
   * A header of {@code form} whose field holds {@code value}'s low bytes (a value the field cannot hold is cut, as a
   * client could send it), after offset bytes of 0xA5.
   */
  private static byte[] header(LengthField form, long value) {
    byte[] header = new byte[form.headerSize()];
    Arrays.fill(header, 0, form.lengthFieldOffset(), (byte) 0xA5);
    int n = form.lengthFieldLength();
    for (int i = 0; i < n; i++) {
      int shift = 8 * (form.byteOrder() == ByteOrder.BIG_ENDIAN ? n - 1 - i : i);
      header[form.lengthFieldOffset() + i] = (byte) (value >>> shift);
    }
    return header;
  }

  /** A frame of {@code form} with a body of {@code length} bytes (from {@code payload}, zeros past its end). */
  private static byte[] frame(LengthField form, int length, byte[] payload) {
    byte[] frame = Arrays.copyOf(header(form, (long) length - form.lengthAdjustment()), form.headerSize() + length);
    System.arraycopy(payload, 0, frame, form.headerSize(), Math.min(length, payload.length));
    return frame;
  }

  private static byte[] pattern(int length, byte seed) {
    byte[] payload = new byte[length];
    for (int i = 0; i < length; i++) {
      payload[i] = (byte) (seed + i * 31 + (i >>> 8));
    }
    return payload;
  }

  /**
   * The wire format, decoded the plain way: the length field's bytes in their order, unsigned, plus the adjustment;
   * below 0 or more than the maximum is an error once its header is whole, and nothing after it counts; otherwise
   * the frame is the header and that many bytes.
   */
  static final class Reference {
    /** Where each whole frame ends in the stream (it starts where the one before ends). */
    final List<Integer> frameEnds = new ArrayList<>();
    /** Where the header that is too large ends, -1 if none; and its length. */
    final int errorAt;
    final long errorLength;
    /** Whether the error is a body length below 0 (the field's value is then {@link #errorLength}). */
    final boolean errorTooShort;
    /** The field's value is past 2^62: not compared exactly (the parser reports such lengths clamped). */
    final boolean errorHuge;
    final LengthField form;
    /** Where the bytes of no whole frame start: an incomplete frame, or the header that is too large. */
    final int tail;

    Reference(LengthField form, byte[] stream, int maxFrameSize) {
      this.form = form;
      int headerSize = form.headerSize();
      int at = 0;
      int error = -1;
      long errorLength = 0;
      boolean tooShort = false;
      boolean huge = false;
      while (stream.length - at >= headerSize) {
        java.math.BigInteger value = fieldValue(form, stream, at);
        java.math.BigInteger body = value.add(java.math.BigInteger.valueOf(form.lengthAdjustment()));
        if (body.signum() < 0 || body.compareTo(java.math.BigInteger.valueOf(maxFrameSize)) > 0) {
          error = at + headerSize;
          tooShort = body.signum() < 0;
          huge = value.bitLength() > 62;
          errorLength = tooShort ? value.longValue() : body.longValue();
          break;
        }
        int length = body.intValueExact();
        if (stream.length - at - headerSize < length) {
          break;
        }
        at += headerSize + length;
        frameEnds.add(at);
      }
      this.errorAt = error;
      this.errorLength = errorLength;
      this.errorTooShort = tooShort;
      this.errorHuge = huge;
      this.tail = at;
    }

    /** The unsigned value of the length field of the frame at {@code at}. */
    static java.math.BigInteger fieldValue(LengthField form, byte[] stream, int at) {
      int n = form.lengthFieldLength();
      byte[] bigEndian = new byte[n + 1];
      for (int i = 0; i < n; i++) {
        byte b = stream[at + form.lengthFieldOffset() + i];
        bigEndian[form.byteOrder() == ByteOrder.BIG_ENDIAN ? 1 + i : n - i] = b;
      }
      return new java.math.BigInteger(bigEndian);
    }

    /** Events (frames, then the failure) that the first {@code fed} bytes decide. */
    int eventsWithin(long fed) {
      int n = 0;
      while (n < frameEnds.size() && frameEnds.get(n) <= fed) {
        n++;
      }
      return errorAt >= 0 && n == frameEnds.size() && errorAt <= fed ? n + 1 : n;
    }

    /** Where the last whole frame within the first {@code fed} bytes ends. */
    int deliveredWithin(long fed) {
      int end = 0;
      for (int e : frameEnds) {
        if (e <= fed) {
          end = e;
        }
      }
      return end;
    }
  }

  /** One execution of a plan against a parser, checked step by step against the reference. */
  private static final class Run implements FrameParser.Listener {
    private final Plan plan;
    private final Reference reference;
    private final FrameParser parser;
    private final long liveBefore = liveBuffers();
    /** Every read fed, with one reference of the test's own on top of the parser's. */
    private final List<ByteBuf> inputs = new ArrayList<>();
    /** Frames kept to the end, with the bytes they had on delivery. */
    private final List<ByteBuf> kept = new ArrayList<>();
    private final List<byte[]> keptBytes = new ArrayList<>();
    /** Bytes handed to the parser so far. */
    private long fed;
    /** Events seen: frames, then a failure. */
    private int events;
    private int frames;
    private boolean failed;
    private long fedAtFailure;
    /** Whether the owner (this test) has the parser paused, and what the parser last told its source. */
    private boolean paused;
    private boolean reading = true;
    /** Inside a call into the parser, and which. */
    private String inside = "";

    Run(Plan plan) {
      this.plan = plan;
      this.reference = new Reference(plan.form(), plan.stream(), Math.min(plan.maxFrameSize(), plan.form().largestBody()));
      this.parser = FrameParser.controlling(on -> reading = on, plan.form(), plan.maxFrameSize(), this);
    }

    void check() {
      String leak = LEAKS.poll();
      LEAKS.clear();
      assertTrue(leak == null, () -> "Netty reported a leak in an earlier run:\n" + leak);
      boolean checked = false;
      try {
        run();
        checked = true;
      } finally {
        parser.releaseBuffers();
        kept.forEach(ByteBuf::release);
        for (int i = 0; i < inputs.size(); i++) {
          ByteBuf input = inputs.get(i);
          if (checked) {
            assertEquals(1, input.refCnt(), "read " + i + " is still referenced after the parser and its frames are done");
          }
          // After a finding, whatever the parser left is released all the same, so that no leak report follows.
          if (input.refCnt() > 0) {
            input.release(input.refCnt());
          }
        }
      }
      assertEquals(liveBefore, liveBuffers(), "pooled buffers of the parser's never released");
    }

    private void run() {
      for (Step step : plan.steps()) {
        if (step instanceof Feed f) {
          fed += f.bytes().length;
          inside = "handle";
          if (f.offset() < 0) {
            parser.handle(Buffer.buffer(f.bytes()));
          } else {
            ByteBuf input = ALLOC.directBuffer(f.offset() + f.bytes().length);
            input.writeZero(f.offset()).writeBytes(f.bytes()).skipBytes(f.offset());
            inputs.add(input.retain());
            parser.handle(input);
          }
        } else if (step instanceof Pause) {
          paused = true;
          inside = "pause";
          parser.pause();
        } else {
          paused = false;
          inside = "resume";
          parser.resume();
        }
        inside = "";
        checkCaughtUp(step);
      }
      if (plan.abandon()) {
        return;
      }
      // The end of the stream: the owner lets everything through.
      for (int i = 0; paused && i <= plan.pauseOnFrame().length; i++) {
        paused = false;
        inside = "resume";
        parser.resume();
        inside = "";
        checkCaughtUp(new Resume());
      }
      assertTrue(!paused, "the parser kept pausing");
      checkEnd();
    }

    /** After a step: every event the bytes fed so far decide has come (unless paused), and no other. */
    private void checkCaughtUp(Step step) {
      int expected = reference.eventsWithin(fed);
      if (!paused && !failed) {
        assertEquals(expected, events, () -> "events after " + step + ", " + fed + " bytes fed: " + describe());
        assertEquals(fed - reference.deliveredWithin(fed), parser.bufferedBytes(), "bufferedBytes after " + step);
        assertEquals(fed == reference.deliveredWithin(fed), parser.atFrameBoundary(), "atFrameBoundary after " + step);
      }
      assertTrue(events <= expected, () -> "an event before its bytes: " + describe());
      assertEquals(!(paused || failed), reading, () -> "demand after " + step + (failed ? " (failed)" : paused ? " (paused)" : ""));
    }

    private void checkEnd() {
      assertEquals(reference.eventsWithin(fed), events, this::describe);
      for (int i = 0; i < kept.size(); i++) {
        byte[] now = new byte[kept.get(i).readableBytes()];
        kept.get(i).getBytes(kept.get(i).readerIndex(), now);
        assertArrayEquals(keptBytes.get(i), now, "a frame kept by the listener changed after delivery");
      }
      if (failed) {
        // Counted: every byte given before the failure was seen; delivered: the frames before the bad header.
        assertEquals(fedAtFailure - (reference.errorAt - plan.form().headerSize()), parser.bufferedBytes(), "bufferedBytes after the failure");
        assertTrue(!parser.atFrameBoundary(), "atFrameBoundary after the failure");
        assertEquals(0, parser.announcedFrameSize(), "announcedFrameSize after the failure");
      } else {
        assertEquals(fed - reference.tail, parser.bufferedBytes(), "bufferedBytes at the end");
        assertEquals(fed == reference.tail, parser.atFrameBoundary(), "atFrameBoundary at the end");
        byte[] s = plan.stream();
        long announced = s.length - reference.tail >= plan.form().headerSize()
          ? plan.form().headerSize() + Reference.fieldValue(plan.form(), s, reference.tail).longValueExact()
            + plan.form().lengthAdjustment()
          : 0;
        assertEquals(announced, parser.announcedFrameSize(), "announcedFrameSize at the end");
      }
    }

    private String describe() {
      return plan.form() + ", maxFrameSize " + plan.maxFrameSize() + ", frames " + frames + (failed ? " and a failure" : "")
        + " seen; the reference has frames ending at " + reference.frameEnds
        + (reference.errorAt >= 0 ? " and a header of " + reference.errorLength + " ending at " + reference.errorAt : "")
        + "; " + fed + " of " + plan.stream().length + " bytes fed";
    }

    @Override
    public void frame(ByteBuf frame) {
      int n = frames;
      try {
        assertTrue(inside.equals("handle") || inside.equals("resume"), () -> "frame " + n + " delivered during " + inside);
        assertTrue(!paused, () -> "frame " + n + " delivered while paused");
        assertTrue(!failed, () -> "frame " + n + " delivered after the failure");
        assertTrue(n < reference.frameEnds.size(), () -> "frame " + n + " that the reference does not have: " + describe());
        assertTrue(frame.refCnt() > 0, "a frame delivered released");
        int start = n == 0 ? 0 : reference.frameEnds.get(n - 1);
        byte[] expected = Arrays.copyOfRange(plan.stream(), start, reference.frameEnds.get(n));
        byte[] actual = ByteBufUtil.getBytes(frame);
        assertArrayEquals(expected, actual, () -> "frame " + n + " (bytes " + start + " on): " + describe());
        if (flag(plan.keepFrame(), n)) {
          kept.add(frame);
          keptBytes.add(actual);
          frame = null;
        }
      } finally {
        frames++;
        events++;
        if (frame != null) {
          frame.release();
        }
      }
      if (flag(plan.pauseOnFrame(), n)) {
        paused = true;
        parser.pause();
      }
    }

    @Override
    public void failed(Throwable error) {
      assertTrue(!failed, "a second failure");
      failed = true;
      fedAtFailure = fed;
      events++;
      assertTrue(reference.errorAt >= 0, () -> "a failure the reference does not have: " + error + "; " + describe());
      assertEquals(reference.frameEnds.size(), frames, () -> "failed after " + frames + " frames: " + describe());
      if (reference.errorTooShort) {
        FrameTooShortException tooShort = assertInstanceOf(FrameTooShortException.class, error);
        assertEquals(reference.errorLength, tooShort.length(), "the length field's value");
      } else {
        FrameTooLargeException tooLarge = assertInstanceOf(FrameTooLargeException.class, error);
        if (!reference.errorHuge) {
          assertEquals(reference.errorLength, tooLarge.length(), "the announced length");
        }
        assertEquals(Math.min(plan.maxFrameSize(), plan.form().largestBody()), tooLarge.maxFrameSize());
      }
      if (!inside.equals("handle") && !inside.equals("resume")) {
        fail("failure reported during " + inside);
      }
    }
  }

  private static boolean flag(boolean[] flags, int frame) {
    return frame < flags.length && flags[frame];
  }

  /** Pooled buffers of {@link #ALLOC} not yet released (its thread caches are off, so this is exact). */
  private static long liveBuffers() {
    long live = 0;
    for (PoolArenaMetric arena : ALLOC.metric().directArenas()) {
      live += arena.numActiveAllocations();
    }
    return live;
  }
}
