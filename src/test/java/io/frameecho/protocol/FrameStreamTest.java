package io.frameecho.protocol;

import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.streams.ReadStream;
import org.junit.jupiter.api.Test;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link FrameStream} as a Vert.x {@code ReadStream}: messages in order, its demand is the source's, then its end. */
class FrameStreamTest {

  private static final LengthField SHORT_BE = LengthField.of(2, ByteOrder.BIG_ENDIAN);

  /** A source fed by the test, which records its demand. */
  private static final class Source implements ReadStream<Buffer> {
    Handler<Buffer> handler;
    Handler<Void> endHandler;
    Handler<Throwable> exceptionHandler;
    boolean paused;

    @Override
    public Source exceptionHandler(Handler<Throwable> handler) {
      this.exceptionHandler = handler;
      return this;
    }

    @Override
    public Source handler(Handler<Buffer> handler) {
      this.handler = handler;
      return this;
    }

    @Override
    public Source pause() {
      paused = true;
      return this;
    }

    @Override
    public Source resume() {
      paused = false;
      return this;
    }

    @Override
    public Source fetch(long amount) {
      paused = false;
      return this;
    }

    @Override
    public Source endHandler(Handler<Void> endHandler) {
      this.endHandler = endHandler;
      return this;
    }
  }

  private final Source source = new Source();
  private final List<String> events = new ArrayList<>();
  private final FrameStream frames = FrameStream.newParser(SHORT_BE, 100, source)
    .handler(m -> events.add(m.toString()))
    .exceptionHandler(e -> events.add(e.getClass().getSimpleName()))
    .endHandler(v -> events.add("end"));

  private static Buffer frames(String... messages) {
    Buffer stream = Buffer.buffer();
    for (String m : messages) {
      stream.appendBuffer(SHORT_BE.frame(Buffer.buffer(m)));
    }
    return stream;
  }

  @Test
  void messagesInOrderIncludingEmptyOnesThenTheEnd() {
    Buffer stream = frames("a", "", "bc", "");
    for (int i = 0; i < stream.length(); i++) {
      source.handler.handle(stream.getBuffer(i, i + 1));
    }
    source.endHandler.handle(null);
    assertEquals(List.of("a", "", "bc", "", "end"), events);
  }

  @Test
  void fetchLetsThroughThatManyMessagesAndTheSourceReadsOnlyWhileSomeAreWanted() {
    frames.pause();
    assertTrue(source.paused);
    source.handler.handle(frames("1", "2", "3"));
    source.endHandler.handle(null);
    assertEquals(List.of(), events, "nothing while paused, not even the end");
    frames.fetch(2);
    assertEquals(List.of("1", "2"), events);
    assertTrue(source.paused, "the source is paused once the wanted messages are delivered");
    frames.fetch(1);
    assertEquals(List.of("1", "2", "3", "end"), events, "the end comes after the last message");
  }

  @Test
  void aHandlerThatPausesStopsTheNextMessageUntilResume() {
    frames.handler(m -> {
      events.add(m.toString());
      frames.pause();
    });
    source.handler.handle(frames("1", "2"));
    assertEquals(List.of("1"), events);
    frames.resume();
    assertEquals(List.of("1", "2"), events);
  }

  @Test
  void aStreamEndingInsideAFrameReportsItThenEnds() {
    source.handler.handle(frames("whole").appendBuffer(frames("cut").getBuffer(0, 3)));
    source.endHandler.handle(null);
    assertEquals(List.of("whole", "EOFException", "end"), events);
  }

  @Test
  void aFrameOverTheMaximumIsReportedAndNothingAfterIt() {
    source.handler.handle(frames("ok").appendBuffer(Buffer.buffer(new byte[] {0, 101})).appendBuffer(frames("after")));
    assertEquals(List.of("ok", "FrameTooLargeException"), events);
    assertTrue(source.paused, "a refused stream reads no more");
  }

  @Test
  void fedByHandAsAHandler() {
    List<Buffer> got = new ArrayList<>();
    FrameStream parser = FrameStream.newParser(SHORT_BE.withLengthAdjustment(-2), 10, got::add);
    parser.handle(Buffer.buffer(new byte[] {0, 2, 0, 4, 'h'}));
    parser.handle(Buffer.buffer(new byte[] {'i'}));
    assertEquals(List.of(Buffer.buffer(), Buffer.buffer("hi")), got);
    List<Throwable> errors = new ArrayList<>();
    parser.exceptionHandler(errors::add).handle(Buffer.buffer(new byte[] {0, 1}));
    assertInstanceOf(FrameTooShortException.class, errors.get(0));
  }
}
