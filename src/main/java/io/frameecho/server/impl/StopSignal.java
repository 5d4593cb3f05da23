package io.frameecho.server.impl;

/**
 * The signal that is stopping the process, when a command line that handles signals says so ({@code cli}); the
 * shutdown line names it. A library embedded in an application never hears of signals: the line then names none.
 */
public final class StopSignal {

  private static volatile String received;

  private StopSignal() {
  }

  /** Records {@code name} ({@code SIGTERM}, {@code SIGINT}) as what stops the process; the first one stands. */
  public static void received(String name) {
    if (received == null) {
      received = name;
    }
  }

  /** The signal stopping the process, or null. */
  public static String received() {
    return received;
  }

  /** What stopped the process, for the shutdown line: " on SIGTERM", or nothing when the application stopped it. */
  static String cause() {
    String signal = received();
    return signal == null ? "" : " on " + signal;
  }
}
