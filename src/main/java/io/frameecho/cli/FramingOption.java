package io.frameecho.cli;

import io.frameecho.protocol.LengthField;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** {@code --framing}, which {@code client} and {@code bench} share (a picocli mixin): the server's {@code framing} key. */
final class FramingOption {

  @Option(names = "--framing", paramLabel = "JSON", description = "the frames' header, as the server's framing key: "
    + "'{\"lengthFieldLength\":2,\"byteOrder\":\"BIG_ENDIAN\"}' (default: frame-echo's own, 4 bytes little-endian)")
  String json;

  /** The form given, or frame-echo's own; a bad one is a usage error naming its key. */
  LengthField form(CommandSpec spec) {
    if (json == null) {
      return LengthField.DEFAULT;
    }
    try {
      return LengthField.fromJson(new JsonObject(json), "--framing ");
    } catch (DecodeException e) {
      throw new ParameterException(spec.commandLine(), "--framing: not a JSON object: " + e.getMessage());
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
  }
}
