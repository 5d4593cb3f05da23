// CPU per frame of four ways to cut length-prefixed frames out of a byte stream, on one thread, in one run: frame-echo's
// FrameParser (zero-copy ByteBuf frames), its FrameStream (Vert.x Buffer messages, as RecordParser gives), Vert.x's
// RecordParser switching between fixed sizes (header, then body: the hand-built way), and Netty's
// LengthFieldBasedFrameDecoder in an EmbeddedChannel. The form: a 4-byte big-endian length of the body, header
// stripped. Each parser gets the same stream cut into 64 KiB reads, as a socket hands them over, in its own input
// type (a Vert.x Buffer, or a Netty ByteBuf wrapping the read: no copy on the way in), and each message's length is
// summed (and checked), so nothing is optimised away. Rounds alternate the parsers; the table gives the median of the
// measured rounds of the thread's CPU time per frame, and the ratio to FrameParser.
//
//   java -cp target/frame-echo.jar src/bench/FramingCompare.java [ROUNDS] [MiB per round]
//
// Run it under the bench lock (src/docs/BENCHMARKS.md): it is a measurement.

import io.frameecho.protocol.FrameParser;
import io.frameecho.protocol.FrameStream;
import io.frameecho.protocol.LengthField;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.parsetools.RecordParser;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

public final class FramingCompare {

  static final LengthField FORM = LengthField.of(4, ByteOrder.BIG_ENDIAN);
  static final int READ = 64 << 10;
  static final int MAX = 32 << 20;
  static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

  interface Parser {
    /** Feeds every read once; returns the bytes of the messages delivered. */
    long run(List<byte[]> reads);
  }

  static long frameParser(List<byte[]> reads) {
    long[] sum = {0};
    FrameParser parser = FrameParser.standalone(FORM, MAX, new FrameParser.Listener() {
      @Override
      public void frame(ByteBuf frame) {
        sum[0] += frame.readableBytes() - FORM.headerSize();
        frame.release();
      }

      @Override
      public void failed(Throwable error) {
        throw new IllegalStateException(error);
      }
    });
    for (byte[] read : reads) {
      parser.handle(Unpooled.wrappedBuffer(read));
    }
    return sum[0];
  }

  static long frameStream(List<Buffer> reads) {
    long[] sum = {0};
    FrameStream frames = FrameStream.newParser(FORM, MAX, message -> sum[0] += message.length());
    for (Buffer read : reads) {
      frames.handle(read);
    }
    return sum[0];
  }

  static long recordParser(List<Buffer> reads) {
    long[] sum = {0};
    RecordParser parser = RecordParser.newFixed(4);
    boolean[] header = {true};
    parser.handler(record -> {
      if (header[0]) {
        long length = record.getUnsignedInt(0);
        if (length > MAX) {
          throw new IllegalStateException("too large");
        }
        // RecordParser cannot ask for a record of 0 bytes: the streams here have none.
        parser.fixedSizeMode((int) length);
        header[0] = false;
      } else {
        sum[0] += record.length();
        parser.fixedSizeMode(4);
        header[0] = true;
      }
    });
    for (Buffer read : reads) {
      parser.handle(read);
    }
    return sum[0];
  }

  static long nettyDecoder(List<byte[]> reads) {
    long sum = 0;
    EmbeddedChannel channel = new EmbeddedChannel(new LengthFieldBasedFrameDecoder(MAX, 0, 4, 0, 4));
    for (byte[] read : reads) {
      channel.writeInbound(Unpooled.wrappedBuffer(read));
      ByteBuf frame;
      while ((frame = channel.readInbound()) != null) {
        sum += frame.readableBytes();
        frame.release();
      }
    }
    channel.finishAndReleaseAll();
    return sum;
  }

  public static void main(String[] args) {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 7;
    int mib = args.length > 1 ? Integer.parseInt(args[1]) : 64;
    int warmup = 3;
    String[] names = {"FrameParser (ByteBuf)", "FrameStream (Buffer)", "RecordParser", "Netty LengthFieldBasedFrameDecoder"};
    System.out.println("| frame | " + String.join(" | ", names) + " |");
    System.out.println("|---|---:|---:|---:|---:|");
    for (int size : new int[] {16, 4 << 10, 1 << 20}) {
      // The stream: frames of this payload size, about mib MiB of them, cut into 64 KiB reads.
      int frameBytes = FORM.headerSize() + size;
      int frames = Math.max(16, (int) (((long) mib << 20) / frameBytes));
      byte[] stream = new byte[frames * frameBytes];
      for (int f = 0; f < frames; f++) {
        int at = f * frameBytes;
        stream[at] = (byte) (size >>> 24);
        stream[at + 1] = (byte) (size >>> 16);
        stream[at + 2] = (byte) (size >>> 8);
        stream[at + 3] = (byte) size;
        Arrays.fill(stream, at + 4, at + frameBytes, (byte) f);
      }
      List<byte[]> reads = new ArrayList<>();
      List<Buffer> buffers = new ArrayList<>();
      for (int at = 0; at < stream.length; at += READ) {
        byte[] read = Arrays.copyOfRange(stream, at, Math.min(stream.length, at + READ));
        reads.add(read);
        buffers.add(Buffer.buffer(read));
      }
      Parser[] parsers = {r -> frameParser(reads), r -> frameStream(buffers), r -> recordParser(buffers), r -> nettyDecoder(reads)};
      long[][] picosPerFrame = new long[parsers.length][rounds];
      long expected = (long) frames * size;
      for (int round = 0; round < warmup + rounds; round++) {
        for (int p = 0; p < parsers.length; p++) {
          long before = CPU.getCurrentThreadCpuTime();
          long got = parsers[p].run(reads);
          long cpu = CPU.getCurrentThreadCpuTime() - before;
          if (got != expected) {
            throw new IllegalStateException(names[p] + " delivered " + got + " bytes, not " + expected);
          }
          if (round >= warmup) {
            picosPerFrame[p][round - warmup] = cpu * 1000 / frames;
          }
        }
      }
      StringBuilder row = new StringBuilder("| " + (size >= 1 << 20 ? (size >> 20) + " MiB" : size >= 1024 ? (size >> 10) + " KiB" : size + " B") + " |");
      long base = median(picosPerFrame[0]);
      for (int p = 0; p < parsers.length; p++) {
        long m = median(picosPerFrame[p]);
        row.append(String.format(" %s%s |", ns(m), p == 0 ? "" : String.format(" (%.2fx)", (double) m / base)));
      }
      System.out.println(row);
    }
    System.out.println("CPU time per frame (median of " + rounds + " rounds after " + warmup + " of warm-up; x: / FrameParser), "
      + mib + " MiB per round in 64 KiB reads, " + System.getProperty("java.version"));
  }

  /** Picoseconds per frame, written in the unit that fits. */
  static String ns(long picos) {
    return picos >= 1_000_000_000 ? String.format("%.2f ms", picos / 1e9) : picos >= 1_000_000 ? String.format("%.1f µs", picos / 1e6)
      : String.format("%.0f ns", picos / 1e3);
  }

  static long median(long[] values) {
    long[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }
}
