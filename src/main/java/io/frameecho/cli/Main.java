package io.frameecho.cli;

import io.vertx.launcher.application.VertxApplication;

import java.util.Arrays;

/**
 * The jar's entry point: {@code client} and {@code bench} run our commands; any other argument list goes
 * unchanged to the Vert.x launcher, which deploys the jar's {@code Main-Verticle}. Extending the launcher
 * (rather than calling its {@code main}) is what lets it find this jar's manifest.
 */
public final class Main extends VertxApplication {

  private Main(String[] args) {
    super(args);
  }

  public static void main(String[] args) {
    if (args.length > 0 && args[0].equals("client")) {
      System.exit(ClientCommand.commandLine(System.out, System.err).execute(rest(args)));
    }
    if (args.length > 0 && args[0].equals("bench")) {
      System.exit(BenchCommand.commandLine(System.out, System.err).execute(rest(args)));
    }
    int exitCode = new Main(args).launch();
    if (exitCode != 0) {
      System.exit(exitCode);
    }
  }

  private static String[] rest(String[] args) {
    return Arrays.copyOfRange(args, 1, args.length);
  }
}
