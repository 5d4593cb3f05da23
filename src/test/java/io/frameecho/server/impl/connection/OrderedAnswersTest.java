package io.frameecho.server.impl.connection;

import io.frameecho.server.FrameEchoMetrics;
import io.frameecho.server.RequestHandler;
import io.frameecho.server.impl.shared.BudgetAccount;
import io.frameecho.server.impl.shared.BufferBudget;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;

import static io.frameecho.server.impl.connection.Wire.concat;
import static io.frameecho.server.impl.connection.Wire.frame;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class OrderedAnswersTest {

  private static final int MAX_IN_FLIGHT = 3;

  private final BufferBudget budget = Accounts.budget();
  private final BudgetAccount account = Accounts.on(budget);
  private final FakeSocket socket = new FakeSocket();
  /** The payloads the handler was given, and the answer it owes for each, in request order. */
  private final List<String> requests = new ArrayList<>();
  private final List<Promise<Buffer>> answers = new ArrayList<>();
  private RequestHandler handler = request -> {
    requests.add(request.toString());
    Promise<Buffer> answer = Promise.promise();
    answers.add(answer);
    return answer.future();
  };
  private int answered;
  private final List<Throwable> failures = new ArrayList<>();
  private final OrderedAnswers ordered = answersOn(Runnable::run);

  /** Answers whose later writes run on {@code loop}. */
  private OrderedAnswers answersOn(Executor loop) {
    return new OrderedAnswers(request -> handler.handle(request), MAX_IN_FLIGHT,
      new ResponseWriter(socket, account, new ConnectionLog(null, null, 0)), account, FrameEchoMetrics.NONE, new OrderedAnswers.Listener() {
        @Override
        public void answered() {
          answered++;
        }

        @Override
        public void handlerFailed(Throwable cause) {
          failures.add(cause);
        }
      }, loop);
  }
  private final List<ByteBuf> frames = new ArrayList<>();

  /** A request frame, read (so counted in the budget) and handed over as the connection does; true: stop reading. */
  private boolean request(String payload) {
    ByteBuf frame = Unpooled.wrappedBuffer(frame(payload));
    frames.add(frame);
    account.received(frame.readableBytes());
    return ordered.request(frame, frame.readableBytes(), 0);
  }

  private void answer(int request, String payload) {
    answers.get(request).complete(Buffer.buffer(payload));
  }

  private byte[] written() {
    return socket.written().getBytes();
  }

  @AfterEach
  void everythingReleased() {
    frames.forEach(frame -> assertEquals(0, frame.refCnt(), "a request frame not released"));
    ordered.drop();
    assertEquals(0, budget.used());
  }

  @Test
  void answersCompletedOutOfOrderAreWrittenInRequestOrder() {
    request("a");
    request("bb");
    request("ccc");
    assertEquals(List.of("a", "bb", "ccc"), requests);

    answer(2, "C");
    answer(1, "B");
    assertEquals(0, written().length, "nothing goes out before the first answer");
    assertTrue(ordered.awaiting());

    answer(0, "A");
    assertArrayEquals(concat(frame("A"), frame("B"), frame("C")), written());
    assertFalse(ordered.awaiting());
    assertEquals(3, answered);
  }

  @Test
  void anAnswerGivenAtOnceWaitsBehindAnEarlierOne() {
    request("slow");
    handler = request -> Future.succeededFuture(Buffer.buffer("fast"));
    request("quick");
    assertEquals(0, written().length);

    answer(0, "slow");
    assertArrayEquals(concat(frame("slow"), frame("fast")), written());
  }

  @Test
  void answersGivenAtOnceAreWrittenAtOnce() {
    handler = request -> Future.succeededFuture(Buffer.buffer(request.toString().toUpperCase()));
    request("x");
    request("");
    assertArrayEquals(concat(frame("X"), frame("")), written());
    assertFalse(ordered.awaiting());
    assertEquals(0, answered, "nothing was awaited");
  }

  @Test
  void fullAtMaxInFlightAwaitedAndNotOnceOneIsAnswered() {
    assertFalse(request("1"));
    assertFalse(request("2"));
    assertFalse(ordered.full());
    assertTrue(request("3"), "the request that takes the last slot says so");
    assertTrue(ordered.full());

    answer(1, "two");
    assertTrue(ordered.full(), "an answer behind the first still waits its turn");
    answer(0, "one");
    assertFalse(ordered.full());
    assertTrue(ordered.awaiting());
    answer(2, "three");
    assertFalse(ordered.awaiting());
  }

  @Test
  void aFailedAnswerWritesTheEarlierAndDropsTheLater() {
    request("a");
    request("b");
    request("c");
    request("d");
    answer(2, "C");
    answer(0, "A");
    answers.get(1).fail("boom");

    assertArrayEquals(frame("A"), written());
    assertEquals(1, failures.size());
    assertEquals("boom", failures.get(0).getMessage());
    assertFalse(ordered.awaiting());
    assertEquals(frame("d").length, budget.used(), "the dropped requests' bytes are released, but for the one still "
      + "awaited: the handler holds it until its answer completes");

    answer(3, "D");
    assertEquals(0, budget.used());
    assertArrayEquals(frame("A"), written(), "an answer after the failure is not written");
    assertEquals(1, failures.size());
  }

  @Test
  void aHandlerThatThrowsIsAFailedAnswer() {
    request("a");
    handler = request -> {
      throw new IllegalStateException("thrown");
    };
    request("b");
    assertTrue(failures.isEmpty(), "it fails in its turn, after the earlier answer");

    answer(0, "A");
    assertArrayEquals(frame("A"), written());
    assertEquals(1, failures.size());
    assertEquals("thrown", failures.get(0).getMessage());
    assertFalse(ordered.awaiting());
  }

  @Test
  void aHandlerThatThrowsWithNothingAwaitedFailsAtOnce() {
    handler = request -> {
      throw new IllegalStateException("thrown");
    };
    request("a");
    assertEquals(1, failures.size());
    assertEquals(0, written().length);
    assertFalse(ordered.awaiting());
  }

  @Test
  void aHandlerThatReturnsNullIsAFailedAnswerInItsTurn() {
    request("a");
    handler = request -> null;
    request("b");
    assertTrue(failures.isEmpty(), "it fails in its turn, after the earlier answer");

    answer(0, "A");
    assertArrayEquals(frame("A"), written());
    assertEquals(1, failures.size());
    assertTrue(failures.get(0) instanceof NullPointerException, failures.get(0).toString());
    assertFalse(ordered.awaiting());
  }

  @Test
  void anAnswerCompletedWithNullFailsLikeAFailedAnswer() {
    handler = request -> Future.succeededFuture(null);
    request("a");
    assertEquals(1, failures.size());
    assertTrue(failures.get(0) instanceof NullPointerException, failures.get(0).toString());
    assertEquals(0, written().length);
    assertFalse(ordered.awaiting());
  }

  @Test
  void requestsHoldTheBudgetUntilAnsweredAndAnswersUntilWritten() {
    socket.completeAtOnce = false;
    request("aaaa");
    request("bb");
    assertEquals(frame("aaaa").length + frame("bb").length, budget.used());

    answer(1, "22");
    answer(0, "1");
    assertEquals("1".length() + "22".length(), budget.used(), "the answers' payloads, until written");
    socket.completeWrites(true);
    assertEquals(0, budget.used());
  }

  @Test
  void dropKeepsTheAwaitedCountedUntilTheyCompleteAndTellsWhetherAnyWere() {
    request("a");
    request("b");
    assertTrue(ordered.drop());
    assertEquals(frame("a").length + frame("b").length, budget.used(), "the handler still holds both requests");
    assertFalse(ordered.awaiting());
    assertFalse(ordered.drop());

    answer(0, "A");
    assertEquals(frame("b").length, budget.used());
    answers.get(1).fail("gone");
    assertEquals(0, budget.used());
    assertEquals(0, written().length, "an answer after the connection closed is not written");
    assertEquals(0, answered, "nor told to the closed connection, which would take it for a live one");
  }

  @Test
  void anAnswerCompletedOnAnotherThreadAfterTheDropIsReleasedOnTheLoop() {
    List<Runnable> loop = new ArrayList<>();
    OrderedAnswers onLoop = answersOn(loop::add);
    ByteBuf frame = Unpooled.wrappedBuffer(frame("a"));
    frames.add(frame);
    account.received(frame.readableBytes());
    onLoop.request(frame, frame.readableBytes(), 0);
    assertTrue(onLoop.drop());

    answer(0, "A");
    assertEquals(frame("a").length, budget.used(), "the completing thread does not touch the budget, which is the loop's");
    assertEquals(1, loop.size());
    loop.remove(0).run();
    assertEquals(0, budget.used(), "released on the loop, once");
    assertEquals(0, written().length);
  }
}
