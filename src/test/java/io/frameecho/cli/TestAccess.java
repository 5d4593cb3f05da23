package io.frameecho.cli;

import io.frameecho.server.FrameEchoOptions;
import io.frameecho.server.impl.ConfigValues;
import io.vertx.core.json.JsonObject;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** Lets tests in other packages run the package-private commands and see the jar's defaults. */
public final class TestAccess {

  private TestAccess() {
  }

  public static int runClient(OutputStream out, OutputStream err, String... args) {
    return ClientCommand.commandLine(new PrintStream(out, true, StandardCharsets.UTF_8),
      new PrintStream(err, true, StandardCharsets.UTF_8)).execute(args);
  }

  /**
   * Every key's default in the runnable jar: the options it deploys for a configuration that names each section the
   * library has by default and sets nothing in it (the jar's defaults apply to the sections a configuration has).
   */
  public static JsonObject jarDefaults() {
    JsonObject libraryDefaults = new FrameEchoOptions().toJson();
    JsonObject emptySections = new JsonObject();
    for (String section : ConfigValues.SECTIONS) {
      if (libraryDefaults.getValue(section) instanceof JsonObject) {
        emptySections.put(section, new JsonObject());
      }
    }
    return new FrameEchoOptions(Main.checkedConfig(new String[] {"-conf", emptySections.encode()}, Map.of())).toJson();
  }
}
