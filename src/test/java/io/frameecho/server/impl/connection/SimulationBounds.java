package io.frameecho.server.impl.connection;

import io.frameecho.server.impl.shared.BudgetAccount;

/**
 * The bounds the simulation holds the connection core to, each in one place so that the budget's author can state
 * them anew: the bytes held, and how long a well-behaved client's frame may wait for its answer.
 */
final class SimulationBounds {

  /** One read of Netty's adaptive size at its largest: what an uncapped read may take. */
  static final int FULL_READ = 64 * 1024;
  /** What a read takes at most while the budget is over its limit ({@link BudgetAccount#SMALL_READ}). */
  static final int SMALL_READ = BudgetAccount.SMALL_READ;

  private SimulationBounds() {
  }

  /**
   * The most {@code budget.used()} may be with {@code connections} open (OPERATING.md, "The buffer budget"): the limit,
   * the frame admitted last past it (admissions go on while the budget is not over), two small reads per connection
   * (what a waiter holds; over TLS a read is a whole record), and one full read per event loop.
   */
  static long heldBound(SimConfig config, int connections) {
    long frame = config.maxFrameSize() + (long) config.framing().headerSize();
    long smallRead = config.tls() ? Math.max(SMALL_READ, SimConfig.TLS_RECORD) : SMALL_READ;
    return config.maxBufferedBytes() + frame + connections * 2 * smallRead + (long) config.loops() * FULL_READ;
  }

  /**
   * The longest a well-behaved client's frame may wait, from the moment the client has it to send to the moment its
   * whole answer is read, with {@code connections} open (OPERATING.md, "The buffer budget"): its turn comes after at most
   * four admissions for each other connection (turns go by the newest and the oldest, and a frame's rest keeps the
   * place of the small read before it: a small read and a rest by each turn), and each admission waits at most for
   * what holds the budget to go: an admitted frame that stalls is evicted a grace after it last read 64 KiB (seen at
   * the next check, as far as the limit needs), and responses nobody reads are cut, where the socket tells (TCP_INFO)
   * once it has sent nothing for a quarter of writeStallTimeoutMs (asked once a grace), elsewhere at
   * writeStallTimeoutMs; then its own frame takes what its rate makes it.
   */
  static long answerBoundMs(SimConfig config, int connections) {
    long grace = config.budgetGraceMs();
    long check = Math.max(10, Math.min(100, grace / 10));
    long nonReaders = config.tcpInfo() ? Math.max(grace, config.writeStallTimeoutMs() / 4) + grace
      : config.writeStallTimeoutMs();
    long turn = Math.max(grace, nonReaders) + check + clockSlackMs(config);
    // Then its own frame, at the steady client's rate (the slowest well-behaved one).
    long ownFrame = (long) Math.ceil((config.maxFrameSize() + config.framing().headerSize()) / SimClient.steadyBytesPerMs(config));
    return (4L * connections + 1) * turn + ownFrame;
  }

  /** Slack on the frame and write-stall clocks: one tick, and an application answer the close waits for. */
  static long clockSlackMs(SimConfig config) {
    return config.maxTickMs() + SimConfig.APPLICATION_DELAY_MS + 1;
  }
}
