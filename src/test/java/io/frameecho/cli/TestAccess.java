package io.frameecho.cli;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Lets tests in other packages run the package-private commands. */
public final class TestAccess {

  private TestAccess() {
  }

  public static int runClient(OutputStream out, OutputStream err, String... args) {
    return ClientCommand.commandLine(new PrintStream(out, true, StandardCharsets.UTF_8),
      new PrintStream(err, true, StandardCharsets.UTF_8)).execute(args);
  }
}
