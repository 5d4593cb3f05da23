package io.frameecho.server.impl.connection;

import io.frameecho.protocol.LengthField;
import io.frameecho.server.impl.shared.BudgetAccount;
import io.frameecho.testkit.VirtualTicker;
import io.netty.buffer.Unpooled;

import java.util.ArrayDeque;
import java.util.Random;

/**
 * One client of the simulation, with one behaviour for its life. It pipelines frames of 0 to {@code maxFrameSize}
 * bytes, checks every answer byte against what it expects (the echo of each frame, or for the application handler the
 * frame with its payload reversed), and notes how long each frame waited for its answer.
 */
final class SimClient {

  enum Behaviour {
    /**
     * Sends at every tick whatever its kernel buffer takes, with at most {@link #PIPELINE_DEPTH} frames unanswered, and
     * reads every answer queued: the server owes it service.
     */
    WELL_BEHAVED,
    /** Sends random pieces, cutting frames anywhere, reads now and then. */
    CUTTER,
    /** A few bytes per tick. */
    TRICKLER,
    /** Part of a frame, then nothing more (it still reads). */
    STALLER,
    /** Pushes fast, then goes quiet with the socket open (it still reads). */
    QUIET_HOLDER,
    /** Sends, never reads. */
    NON_READER,
    /** Sends a while, then shuts down its sending side and reads what it is owed. */
    HALF_CLOSER,
    /** Sends and reads, then resets the connection. */
    RESETTER,
    /**
     * Well-behaved at the budget's stated minimum rate, twice over: {@link #steadyBytesPerMs} at every tick, and reads
     * every answer queued. With large frames its frames take more than a grace: an admitted frame that progresses is kept.
     */
    STEADY
  }

  /** The most frames a well-behaved client has unanswered: it pipelines, but does not queue without end. */
  static final int PIPELINE_DEPTH = 4;

  final int slot;
  final Behaviour behaviour;
  final SimSocket socket;
  private final SimConfig config;
  private final VirtualTicker ticker;
  private final Random random;

  /** Frames made and not yet taken by the kernel. */
  private final ByteQueue toSend = new ByteQueue();
  private long framesMadeBytes;
  /** The answer bytes still owed, in order. */
  private final ByteQueue expected = new ByteQueue();
  private long expectedTotal;
  private long received;
  /** Where the last frame answered whole ends: the first unanswered frame starts here, in what the client sent. */
  private long answeredEnd;
  /** For each frame not yet answered whole: where its answer ends, and when the client had it to send. */
  private final ArrayDeque<long[]> unanswered = new ArrayDeque<>();
  private long worstWaitNanos;
  /** The first answer byte that was not what the client expected, described; null while all were. */
  private String mismatch;

  private boolean quiet;
  private boolean leaving;
  private boolean finSent;
  private boolean reset;
  /** What the steady client may send now, and when it last looked. */
  private double credit;
  private long lastTickNanos;
  /** A staller's, a quiet holder's or a half-closer's point of no more sending, in bytes sent. */
  private final long stopAfter;

  SimClient(int slot, Behaviour behaviour, SimSocket socket, SimConfig config, VirtualTicker ticker, Random random) {
    this.slot = slot;
    this.behaviour = behaviour;
    this.socket = socket;
    this.config = config;
    this.ticker = ticker;
    this.random = random;
    this.stopAfter = 1 + random.nextInt(4 * config.maxFrameSize());
    this.lastTickNanos = ticker.nanoTime();
  }

  static Behaviour randomBehaviour(Random random) {
    Behaviour[] all = Behaviour.values();
    // Well-behaved clients half the time: they are who the bounds speak for.
    return random.nextBoolean() ? Behaviour.WELL_BEHAVED : all[random.nextInt(all.length)];
  }

  boolean wellBehaved() {
    return behaviour == Behaviour.WELL_BEHAVED || behaviour == Behaviour.STEADY;
  }

  /** Acts at every tick of the clock: the well-behaved clients' stated rate, the trickler's few bytes. */
  boolean actsOnTicks() {
    return wellBehaved() || behaviour == Behaviour.TRICKLER;
  }

  /** The steady client's rate: twice what the budget requires of an admitted frame ({@code MIN_PROGRESS} a grace). */
  static double steadyBytesPerMs(SimConfig config) {
    return 2.0 * BudgetAccount.MIN_PROGRESS / config.budgetGraceMs();
  }

  /** One action when the scheduler picks this client; returns what it did, for the trace. */
  String act() {
    if (reset || socket.closedByServer()) {
      return null;
    }
    return switch (behaviour) {
      case WELL_BEHAVED -> wellBehavedAct();
      case STEADY -> readSome(Integer.MAX_VALUE);
      case CUTTER -> send(1 + random.nextInt(8192)) + readSome(random.nextInt(3) == 0 ? 0 : random.nextInt(65536));
      case TRICKLER -> readSome(65536);
      case STALLER, QUIET_HOLDER, HALF_CLOSER -> stoppingAct();
      case NON_READER -> send(1 + random.nextInt(16384));
      case RESETTER -> {
        if (!leaving && random.nextInt(40) == 0) {
          reset();
          yield "resets";
        }
        yield send(1 + random.nextInt(16384)) + readSome(65536);
      }
    };
  }

  /** The action at a tick, for clients that act on ticks. */
  String tick() {
    if (reset || socket.closedByServer()) {
      return null;
    }
    if (behaviour == Behaviour.STEADY) {
      long now = ticker.nanoTime();
      credit += steadyBytesPerMs(config) * (now - lastTickNanos) / 1_000_000;
      lastTickNanos = now;
      int before = toSend.size();
      String did = send((int) Math.min(Integer.MAX_VALUE, (long) credit));
      credit -= Math.max(0, before - toSend.size());
      return did + readSome(Integer.MAX_VALUE);
    }
    return behaviour == Behaviour.TRICKLER ? send(1 + random.nextInt(8)) + readSome(65536) : wellBehavedAct();
  }

  private String wellBehavedAct() {
    return send(Integer.MAX_VALUE) + readSome(Integer.MAX_VALUE);
  }

  private String stoppingAct() {
    if (!quiet && framesMadeBytes - toSend.size() >= stopAfter) {
      quiet = true;
      if (behaviour == Behaviour.HALF_CLOSER) {
        fin();
        return "half-closes" + readSome(65536);
      }
    }
    int chunk = behaviour == Behaviour.QUIET_HOLDER ? 65536 : 1 + random.nextInt(8192);
    return (quiet ? "" : send(chunk)) + readSome(65536);
  }

  /** The run ends: each client leaves as its kind does; readers read what they are owed, then close. */
  void leave() {
    leaving = true;
    if (behaviour == Behaviour.NON_READER) {
      // A close with unread data is a reset.
      reset();
    } else if (!wellBehaved()) {
      fin();
    }
  }

  /** While leaving: a well-behaved client finishes its frames, then FIN; every reader reads its answers. */
  String leavingAct() {
    if (reset || socket.closedByServer()) {
      return null;
    }
    String did = "";
    if (wellBehaved() && !finSent) {
      did = send(Integer.MAX_VALUE);
      if (toSend.size() == 0) {
        fin();
        did += " FIN";
      }
    }
    return did + readSome(Integer.MAX_VALUE);
  }

  private void fin() {
    if (!finSent) {
      finSent = true;
      socket.clientFin();
    }
  }

  private void reset() {
    reset = true;
    socket.clientReset();
  }

  /** Sends up to {@code max} bytes, making the next frame when none is left to send (but not while leaving). */
  private String send(int max) {
    if (finSent || reset) {
      return "";
    }
    if (toSend.size() == 0 && !leaving && (!wellBehaved() || unanswered.size() < PIPELINE_DEPTH)) {
      makeFrame();
    }
    int length = (int) Math.min(max, toSend.size());
    if (length == 0) {
      return "";
    }
    byte[] bytes = toSend.take(length);
    int taken = socket.clientSend(bytes, 0, length);
    if (taken < length) {
      // The kernel buffer is full: the rest waits, first in line.
      ByteQueue rest = new ByteQueue();
      rest.append(bytes, taken, length - taken);
      rest.append(toSend.take(toSend.size()));
      toSend.append(rest.take(rest.size()));
    }
    return taken == 0 ? " send blocked" : " sent " + taken;
  }

  private void makeFrame() {
    int payload = switch (random.nextInt(10)) {
      case 0, 1, 2, 3, 4 -> random.nextInt(257);
      case 5, 6, 7 -> random.nextInt(4097);
      default -> random.nextInt(config.maxFrameSize() + 1);
    };
    LengthField form = config.framing();
    int headerSize = form.headerSize();
    byte[] frame = new byte[headerSize + payload];
    form.writeHeader(Unpooled.wrappedBuffer(frame).clear(), payload);
    // The application's bytes before the length field, if the form has any: the echo gives them back as they were.
    for (int i = 0; i < form.lengthFieldOffset(); i++) {
      frame[i] = (byte) random.nextInt(256);
    }
    for (int i = 0; i < payload; i++) {
      frame[headerSize + i] = (byte) random.nextInt(256);
    }
    toSend.append(frame);
    framesMadeBytes += frame.length;
    socket.clientFrameEnds(framesMadeBytes);
    if (config.application()) {
      // The payload reversed, framed by the server: the request's bytes before a length field at an offset, then its
      // own length field.
      byte[] reversed = new byte[payload];
      for (int i = 0; i < payload; i++) {
        reversed[i] = frame[headerSize + payload - 1 - i];
      }
      byte[] answer = form.frame(io.vertx.core.buffer.Buffer.buffer(reversed)).getBytes();
      System.arraycopy(frame, 0, answer, 0, form.lengthFieldOffset());
      expected.append(answer);
    } else {
      expected.append(frame);
    }
    expectedTotal += frame.length;
    unanswered.add(new long[] {expectedTotal, ticker.nanoTime()});
  }

  private String readSome(int max) {
    byte[] got = socket.clientReceive(max);
    if (got == null) {
      return "";
    }
    if (mismatch == null) {
      if (got.length > expected.size()) {
        mismatch = "got " + got.length + " answer bytes at offset " + received + " where " + expected.size() + " were owed";
      } else {
        byte[] owed = expected.take(got.length);
        for (int i = 0; i < got.length; i++) {
          if (owed[i] != got[i]) {
            mismatch = "answer byte at offset " + (received + i) + " is " + got[i] + ", expected " + owed[i];
            break;
          }
        }
      }
    }
    received += got.length;
    long now = ticker.nanoTime();
    while (!unanswered.isEmpty() && unanswered.peek()[0] <= received) {
      answeredEnd = unanswered.peek()[0];
      worstWaitNanos = Math.max(worstWaitNanos, now - unanswered.poll()[1]);
    }
    return " got " + got.length;
  }

  // ---- what the invariants look at ----

  String mismatch() {
    return mismatch;
  }

  /** How long the oldest frame not answered whole has waited, in ms; 0 when none waits. */
  long oldestWaitMs() {
    return unanswered.isEmpty() ? 0 : (ticker.nanoTime() - unanswered.peek()[1]) / 1_000_000;
  }

  long worstWaitMs() {
    return worstWaitNanos / 1_000_000;
  }

  /** Answer bytes owed for the frames made so far and not received yet. */
  long owedBytes() {
    return expected.size();
  }

  /** Where the last frame answered whole ends, in what the client sent. */
  long answeredEnd() {
    return answeredEnd;
  }

  /** A frame the client sent (a byte of it at least taken by the kernel) was never answered whole. */
  boolean sentUnanswered() {
    return framesMadeBytes - toSend.size() > answeredEnd;
  }

  /** The client itself ended the connection: its FIN, or its reset. */
  boolean leftOnItsOwn() {
    return finSent || reset;
  }

  boolean done() {
    return reset || socket.closedDelivered();
  }
}
