package io.frameecho.server.impl.connection;

/** An invariant of the simulation broken: its name, and what was seen. */
final class SimulationFailure extends AssertionError {

  final String invariant;

  SimulationFailure(String invariant, String seen) {
    super(invariant + ": " + seen);
    this.invariant = invariant;
  }
}
