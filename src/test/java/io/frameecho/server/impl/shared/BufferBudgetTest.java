package io.frameecho.server.impl.shared;

import io.frameecho.testkit.VirtualTicker;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The budget's rules, one test each, driven as connections drive their accounts: every connection runs on one event
 * loop whose hops wait until the test runs them ({@link #told}), and time moves only through a {@link VirtualTicker}.
 * Frame sizes include the header, as the parser announces them. The simulation ({@code ConnectionSimulationTest})
 * proves the promises across many schedules; these pin what each rule does.
 */
class BufferBudgetTest {

  private static final long LIMIT = 1_000_000;
  private static final int MAX_FRAME = 500_000;
  private static final long GRACE_MS = 1000;

  private final VirtualTicker ticker = new VirtualTicker();
  private final ArrayDeque<Runnable> loop = new ArrayDeque<>();
  /** What the connections were told, in order: "name admitted", "name evicted heldBytes", "name asked". */
  private final List<String> events = new ArrayList<>();
  private final BufferBudget budget = new BufferBudget(LIMIT, GRACE_MS, ticker);

  /** Runs the event loop, then returns and forgets what the connections were told. */
  private List<String> told() {
    int ran = 0;
    for (Runnable task; (task = loop.poll()) != null; ) {
      task.run();
      assertTrue(++ran < 10_000, "the budget and its connections hand tasks to each other without end");
    }
    List<String> told = List.copyOf(events);
    events.clear();
    return told;
  }

  /** A connection as its account sees it: an echo whose frames stay held until their response is written. */
  private final class Conn implements BudgetAccount.Owner {
    final String name;
    final BudgetAccount account;
    private final ArrayDeque<Long> responses = new ArrayDeque<>();
    private long buffered;
    private long frameSize;
    boolean paused;

    Conn(String name) {
      this.name = name;
      this.account = new BudgetAccount(budget, loop::add, this);
    }

    /** Reads {@code bytes} of a frame of {@code size} bytes (0: the rest of the one under way); true when it paused. */
    boolean read(long bytes, long size) {
      if (size > 0) {
        frameSize = size;
      }
      account.received((int) bytes);
      buffered += bytes;
      boolean completed = buffered == frameSize;
      if (completed) {
        responses.add(frameSize);
        buffered = 0;
        frameSize = 0;
      }
      paused = account.settle(buffered, frameSize, completed);
      return paused;
    }

    /** The oldest response is written: its frame's bytes are released. */
    void written() {
      account.release((int) (long) responses.remove());
    }

    @Override
    public void budgetHasRoom() {
      events.add(name + " admitted");
      paused = false;
      account.serverPaused(false);
    }

    @Override
    public void budgetEvicted(long heldBytes, long stalledMs, int waiting, long used, long limit) {
      events.add(name + " evicted " + heldBytes);
      close();
    }

    @Override
    public void evictIfNotReading(long graceMs, int waiting, long used, long limit) {
      events.add(name + " asked");
    }

    void close() {
      account.close(buffered);
      buffered = 0;
    }
  }

  @Test
  void aFrameWholeInOneReadIsHeldUntilWrittenAndAsksNothing() {
    Conn a = new Conn("a");
    assertFalse(a.read(1000, 1000));
    assertEquals(1000, budget.used());
    a.written();
    assertEquals(0, budget.used());
    assertEquals(List.of(), told());
  }

  @Test
  void aFrameThatSpansReadsIsAdmittedForItsRestAtOnceAndReadsFreelyToItsEnd() {
    Conn a = new Conn("a");
    assertFalse(a.read(5000, 40_000));
    assertEquals(40_000, budget.used(), "its read and its rest, counted at once");
    assertFalse(a.read(20_000, 0));
    assertEquals(40_000, budget.used(), "reads of an admitted frame take from its admission");
    assertEquals(Integer.MAX_VALUE, new Conn("b").account.readCap(4096), "under the limit, nobody's reads are capped");
    assertEquals(15_000, a.account.readCap(4096), "an admitted frame reads to its end");
    assertFalse(a.read(15_000, 0));
    a.written();
    assertEquals(0, budget.used());
  }

  /** 985,000 bytes of responses held, and a frame admitted while the budget was not over: it is over now. */
  private Conn held;
  private Conn pastTheLimit;

  private void fillTheBudget() {
    held = new Conn("held");
    held.read(985_000, 985_000);
    pastTheLimit = new Conn("pastTheLimit");
    assertFalse(pastTheLimit.read(5000, 500_000), "990,000 held is not over the limit: admitted, past it");
    assertEquals(1_485_000, budget.used());
  }

  @Test
  void aFrameThatDoesNotFitWaitsAndIsAdmittedWhenRoomIsReleased() {
    fillTheBudget();
    Conn b = new Conn("b");
    assertTrue(b.read(5000, 40_000), "the budget is over");
    assertEquals(1, budget.waiting());
    assertEquals(List.of(), told());
    held.written();
    assertEquals(List.of("b admitted"), told());
    assertEquals(500_000 + 40_000, budget.used());
    assertEquals(0, budget.waiting());
  }

  @Test
  void whileAnyoneWaitsEveryReaderWaitsItsTurnToo() {
    fillTheBudget();
    new Conn("b").read(5000, 40_000);
    assertTrue(new Conn("c").read(10, 10), "a whole small frame is counted, and its reader queues behind the waiting frame");
    assertTrue(new Conn("d").read(100, 200), "a frame that would fit does not pass a waiting one");
    assertEquals(3, budget.waiting());
  }

  @Test
  void waitersAreAdmittedByTurnsTheNewestFrameAndTheOldest() {
    fillTheBudget();
    for (int i = 1; i <= 4; i++) {
      assertTrue(new Conn("w" + i).read(5000, 8000));
    }
    held.written();
    List<String> order = told();
    assertTrue(order.equals(List.of("w4 admitted", "w1 admitted", "w3 admitted", "w2 admitted"))
      || order.equals(List.of("w1 admitted", "w4 admitted", "w2 admitted", "w3 admitted")), order::toString);
  }

  @Test
  void waitersAreAdmittedOnlyOnceTheBudgetIsNoLongerOver() {
    fillTheBudget();
    Conn c = new Conn("c");
    assertTrue(c.read(5000, 30_000));
    pastTheLimit.read(495_000, 0);
    assertEquals(List.of(), told(), "the frame admitted last completed and is held as a response: the budget is still over");
    held.written();
    assertEquals(Set.of("c admitted", "pastTheLimit admitted"), Set.copyOf(told()),
      "then c fits; and the reader that queued behind it after its frame had its turn");
  }

  @Test
  void waitersThatWentQuietAheadOfAFreshFrameCostItOneGraceAtMost() {
    fillTheBudget();
    for (int i = 0; i < 20; i++) {
      assertTrue(new Conn("quiet" + i).read(5000, 500_000));
    }
    Conn fresh = new Conn("fresh");
    assertTrue(fresh.read(5000, 500_000));
    held.written();
    List<String> events = new ArrayList<>(told());
    ticker.advance(GRACE_MS + 100);
    events.addAll(told());
    assertTrue(events.contains("fresh admitted"), "the fresh frame is the newest: admitted once what was admitted before it "
      + "went quiet is evicted, a grace later, not one grace per quiet waiter: " + events);
  }

  @Test
  void whatWaitersHoldDoesNotCountAgainstAnAdmission() {
    fillTheBudget();
    for (int i = 0; i < 250; i++) {
      assertTrue(new Conn("w" + i).read(5000, 500_000));
    }
    held.written();
    pastTheLimit.close();
    long admitted = told().size();
    assertEquals(3, admitted, "two are admitted under the limit, a third while it is not over yet; the 1,250,000 bytes "
      + "waiters hold count against none of them");
    assertTrue(budget.used() > LIMIT + MAX_FRAME + 4);
    assertTrue(budget.used() <= LIMIT + MAX_FRAME + 4 + 250 * 5000);
  }

  @Test
  void anAdmittedFrameThatReadsTooLittleWhileOthersWaitIsEvicted() {
    fillTheBudget();
    Conn waiter = new Conn("waiter");
    assertTrue(waiter.read(5000, 20_000));
    ticker.advance(GRACE_MS / 2);
    pastTheLimit.read(BudgetAccount.MIN_PROGRESS / 2, 0);
    ticker.advance(GRACE_MS / 2 - 1);
    assertEquals(List.of(), told(), "within its grace");
    ticker.advance(100);
    assertEquals(List.of("pastTheLimit evicted " + (5000 + BudgetAccount.MIN_PROGRESS / 2), "waiter admitted"), told(),
      "a grace after its admission, with less than 64 KiB read");
  }

  @Test
  void stalledFramesAreEvictedFirstComeFirstOnlyAsFarAsTheLimitNeeds() {
    Conn a = new Conn("a");
    Conn b = new Conn("b");
    Conn c = new Conn("c");
    assertFalse(a.read(5000, 300_000));
    assertFalse(b.read(5000, 300_000));
    assertFalse(c.read(5000, 500_000));
    assertEquals(1_100_000, budget.used());
    assertTrue(new Conn("waiter").read(5000, 100_000));
    ticker.advance(GRACE_MS + 100);
    assertEquals(List.of("a evicted 5000", "waiter admitted"), told(), "a alone brings the budget back under its limit");
    ticker.advance(GRACE_MS);
    assertEquals(List.of(), told(), "nobody waits: b and c are kept");
  }

  @Test
  void anAdmittedFrameThatReadsEnoughOrThatTheServerPausedIsKept() {
    fillTheBudget();
    assertTrue(new Conn("waiter").read(5000, 20_000));
    for (int i = 0; i < 3; i++) {
      ticker.advance(GRACE_MS);
      pastTheLimit.read(BudgetAccount.MIN_PROGRESS, 0);
    }
    pastTheLimit.account.serverPaused(true);
    ticker.advance(3 * GRACE_MS);
    assertTrue(told().stream().noneMatch(e -> e.contains("evicted")),
      "a frame reading at the rate is kept, and time the server paused it is not a stall");
  }

  @Test
  void heldResponsesThatDoNotMoveAreAskedAboutOnceAGraceWhileTheBudgetIsOver() {
    fillTheBudget();
    held.account.serverPaused(true);
    new Conn("waiter").read(5000, 20_000);
    told();
    ticker.advance(GRACE_MS);
    ticker.advance(GRACE_MS);
    assertTrue(told().contains("held asked"));
  }

  @Test
  void overTheLimitReadsAreSmallAndAnAdmittedFrameReadsToItsEndOnly() {
    Conn a = new Conn("a");
    a.read(1_001_000, 1_001_000);
    assertEquals(4096, new Conn("b").account.readCap(4096));
    a.written();
    Conn c = new Conn("c");
    c.read(5000, 6000);
    assertEquals(4096, c.account.readCap(4096), "never less than a small read");
  }

  @Test
  void aClosingWaiterLeavesTheQueueAndAGrantOnItsWayComesBack() {
    fillTheBudget();
    Conn b = new Conn("b");
    b.read(5000, 40_000);
    held.written();
    b.close();
    told();
    pastTheLimit.close();
    assertEquals(0, budget.used(), "the grant b never took came back");
    assertEquals(0, budget.waiting());
  }

  @Test
  void theCheckRunsOnlyWhileSomeoneWaits() {
    fillTheBudget();
    Conn b = new Conn("b");
    b.read(5000, 40_000);
    assertEquals(1, ticker.pending());
    held.written();
    told();
    ticker.advance(GRACE_MS);
    assertEquals(0, ticker.pending());
    b.read(35_000, 0);
    b.written();
    pastTheLimit.close();
    assertEquals(0, budget.used());
  }
}
