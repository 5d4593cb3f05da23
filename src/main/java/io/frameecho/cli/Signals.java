package io.frameecho.cli;

import io.frameecho.server.impl.StopSignal;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * The runnable jar's signals. SIGTERM and SIGINT stop the server gracefully: each is recorded, so that the
 * shutdown line names it, and then handed to the JVM's own handler, which exits through the shutdown hooks
 * (the launcher's hook undeploys, which drains). The JVM keeps SIGQUIT (a thread dump on stdout, the process
 * runs on), SIGUSR1 and SIGUSR2 (see src/docs/OPERATING.md, "Signals"). SIGHUP belongs to the certificate reload
 * ({@link HangupReload}); nothing here touches it.
 */
final class Signals {

  private Signals() {
  }

  /** Installs the stop signals' recording; once, before the launcher starts the server. */
  static void install() {
    for (String name : new String[] {"TERM", "INT"}) {
      recordThenDelegate(name);
    }
  }

  private static void recordThenDelegate(String name) {
    Signal signal = new Signal(name);
    SignalHandler[] jvmHandler = new SignalHandler[1];
    try {
      jvmHandler[0] = Signal.handle(signal, received -> {
        StopSignal.received("SIG" + received.getName());
        SignalHandler previous = jvmHandler[0];
        if (previous == SignalHandler.SIG_DFL || previous == SignalHandler.SIG_IGN) {
          // No Java handler to hand it to: exit as the JVM's own would, 128 + the signal's number.
          System.exit(128 + received.getNumber());
        } else {
          previous.handle(received);
        }
      });
      if (jvmHandler[0] == SignalHandler.SIG_IGN) {
        // Started with the signal ignored (nohup, a shell's background job): it stays ignored.
        Signal.handle(signal, SignalHandler.SIG_IGN);
      }
    } catch (IllegalArgumentException e) {
      // The JVM was started with -Xrs, or the platform has no such signal: its default stays, unnamed.
    }
  }
}
