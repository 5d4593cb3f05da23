package io.frameecho.server.impl;

import io.vertx.core.Context;

/**
 * One connection's dealings with the process's {@link BufferBudget}: the one seam through which it holds
 * and releases bytes. A frame's body is reserved when its header announces it; when the budget cannot hold
 * it, reading pauses until bytes are released somewhere.
 */
final class BudgetAccount {

  private final BufferBudget budget;
  private final Context context;
  private final ReadGate gate;
  /** Held for the body being read. */
  private int body;
  /** The length of a body waiting for budget, or 0. */
  private int awaiting;
  private boolean closed;

  BudgetAccount(BufferBudget budget, Context context, ReadGate gate) {
    this.budget = budget;
    this.context = context;
    this.gate = gate;
  }

  /** A header announced {@code length} body bytes: hold them, or stop reading until they fit. */
  void bodyAnnounced(int length) {
    if (budget.tryReserve(length)) {
      body = length;
    } else {
      awaiting = length;
      gate.pause(ReadGate.Reason.OVER_BUFFER_BUDGET);
      budget.whenReleased(this::retryOnContext);
    }
  }

  private void retryOnContext() {
    context.runOnContext(v -> retry());
  }

  private void retry() {
    if (awaiting == 0 || closed) {
      return;
    }
    if (budget.tryReserve(awaiting)) {
      body = awaiting;
      awaiting = 0;
      gate.resume(ReadGate.Reason.OVER_BUFFER_BUDGET);
    } else {
      budget.whenReleased(this::retryOnContext);
    }
  }

  /** The body being read is complete: what it holds passes to its response, which releases it. */
  int takeBody() {
    int held = body;
    body = 0;
    return held;
  }

  /** Counts bytes held whatever the budget says (a response already produced). */
  void hold(int bytes) {
    budget.reserve(bytes);
  }

  void release(int bytes) {
    budget.release(bytes);
  }

  /** The connection closed: the body being read is released, and a wait for budget ends. */
  void close() {
    closed = true;
    budget.release(body);
    body = 0;
    awaiting = 0;
  }
}
