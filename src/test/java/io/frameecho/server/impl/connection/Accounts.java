package io.frameecho.server.impl.connection;

import io.frameecho.server.impl.shared.BudgetAccount;
import io.frameecho.server.impl.shared.BufferBudget;
import io.frameecho.testkit.VirtualTicker;

/** A budget account for a room tested without its connection: one far under its limit, so nobody waits. */
final class Accounts {

  private Accounts() {
  }

  static BufferBudget budget() {
    return new BufferBudget(1 << 20, 1000, new VirtualTicker());
  }

  static BudgetAccount on(BufferBudget budget) {
    return new BudgetAccount(budget, Runnable::run, new BudgetAccount.Owner() {
      @Override
      public void budgetHasRoom() {
      }

      @Override
      public void budgetEvicted(long heldBytes, long stalledMs, int waiting, long used, long limit) {
      }

      @Override
      public void evictIfNotReading(long graceMs, int waiting, long used, long limit) {
      }
    });
  }
}
