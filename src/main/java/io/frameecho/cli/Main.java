package io.frameecho.cli;

import io.vertx.launcher.application.VertxApplication;

import java.util.Arrays;

/**
 * The jar's entry point: {@code client} runs the command-line client; any other argument list goes
 * unchanged to the Vert.x launcher, which deploys the jar's {@code Main-Verticle}. Extending the launcher
 * (rather than calling its {@code main}) is what lets it find this jar's manifest.
 */
public final class Main extends VertxApplication {

  private Main(String[] args) {
    super(args);
  }

  public static void main(String[] args) {
    if (args.length > 0 && args[0].equals("client")) {
      String[] rest = Arrays.copyOfRange(args, 1, args.length);
      System.exit(ClientCommand.commandLine(System.out, System.err).execute(rest));
    }
    int exitCode = new Main(args).launch();
    if (exitCode != 0) {
      System.exit(exitCode);
    }
  }
}
