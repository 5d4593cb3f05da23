package io.frameecho.server.impl;

import io.frameecho.server.impl.shared.EditDistance;
import io.vertx.core.json.JsonObject;

import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;

/**
 * One configuration key of an options class: its JSON name, the type its value must have, and the class's
 * getter and setter for it.
 * <p>
 * Each options class lists its keys once, in a table of these; the table reads JSON (strictly: an unknown key
 * or a value of the wrong type is refused with the key named), writes {@code toJson}, makes the copy
 * constructor's copy, and names the launcher's {@code FRAME_ECHO_*} variables. Ranges and other rules stay
 * in the setters, which the table calls, so a value is checked the same way however it is set.
 *
 * @param <O> the options class
 * @param <T> the value's Java type
 */
public final class OptionKey<O, T> {

  /** How a value is written in JSON, which is also how an environment variable's text is read. */
  public enum Type {
    STRING,
    BOOLEAN,
    /** An integral number that fits an {@code int}. */
    INTEGER,
    /** An integral number that fits a {@code long}. */
    LONG,
    /** A JSON object passed through as it is. */
    OBJECT,
    /** A section with keys of its own, {@link #sectionKeys()}. */
    SECTION
  }

  private final String name;
  private final Type type;
  private final List<? extends OptionKey<?, ?>> sectionKeys;
  /** A JSON value to a {@code T}, or an exception naming the key path it is given. */
  private final BiFunction<String, Object, T> read;
  private final Function<O, T> get;
  private final BiConsumer<O, T> set;
  private final Function<T, Object> toJson;
  private final UnaryOperator<T> copy;

  private OptionKey(String name, Type type, List<? extends OptionKey<?, ?>> sectionKeys, BiFunction<String, Object, T> read,
                    Function<O, T> get, BiConsumer<O, T> set, Function<T, Object> toJson, UnaryOperator<T> copy) {
    this.name = name;
    this.type = type;
    this.sectionKeys = sectionKeys;
    this.read = read;
    this.get = get;
    this.set = set;
    this.toJson = toJson;
    this.copy = copy;
  }

  /** A key with an immutable value, read from JSON by {@code read}. */
  public static <O, T> OptionKey<O, T> value(String name, Type type, BiFunction<String, Object, T> read, Function<O, T> get,
                                      BiConsumer<O, T> set) {
    return new OptionKey<>(name, type, List.of(), read, get, set, v -> v, v -> v);
  }

  public static <O> OptionKey<O, String> string(String name, Function<O, String> get, BiConsumer<O, String> set) {
    return value(name, Type.STRING, ConfigValues::string, get, set);
  }

  public static <O> OptionKey<O, Boolean> bool(String name, Function<O, Boolean> get, BiConsumer<O, Boolean> set) {
    return value(name, Type.BOOLEAN, ConfigValues::bool, get, set);
  }

  public static <O> OptionKey<O, Integer> integer(String name, Function<O, Integer> get, BiConsumer<O, Integer> set) {
    return value(name, Type.INTEGER, ConfigValues::integer, get, set);
  }

  public static <O> OptionKey<O, Long> longInteger(String name, Function<O, Long> get, BiConsumer<O, Long> set) {
    return value(name, Type.LONG, ConfigValues::longInteger, get, set);
  }

  public static <O> OptionKey<O, JsonObject> object(String name, Function<O, JsonObject> get, BiConsumer<O, JsonObject> set) {
    return new OptionKey<>(name, Type.OBJECT, List.of(), ConfigValues::object, get, set, JsonObject::copy, JsonObject::copy);
  }

  /** A JSON object read into a type of its own ({@code read} names the key path in its errors), copied by {@code copy}. */
  public static <O, T> OptionKey<O, T> typedObject(String name, Function<JsonObject, T> read, Function<O, T> get, BiConsumer<O, T> set,
                                            Function<T, JsonObject> toJson, UnaryOperator<T> copy) {
    return new OptionKey<>(name, Type.OBJECT, List.of(), (key, value) -> read.apply(ConfigValues.object(key, value)), get, set,
      toJson::apply, copy);
  }

  /**
   * A section: an options class of its own, read by its JSON constructor (which names its keys with the
   * section's prefix), copied by its copy constructor, written by its {@code toJson}.
   */
  public static <O, S> OptionKey<O, S> section(String name, List<OptionKey<S, ?>> keys, Function<JsonObject, S> fromJson,
                                        UnaryOperator<S> copy, Function<S, JsonObject> toJson, Function<O, S> get,
                                        BiConsumer<O, S> set) {
    return new OptionKey<>(name, Type.SECTION, keys, (key, value) -> fromJson.apply(ConfigValues.object(key, value)), get,
      set, toJson::apply, copy);
  }

  /** A section that may be absent: a JSON null (or no key) leaves it null. */
  public static <O, S> OptionKey<O, S> optionalSection(String name, List<OptionKey<S, ?>> keys, Function<JsonObject, S> fromJson,
                                                UnaryOperator<S> copy, Function<S, JsonObject> toJson, Function<O, S> get,
                                                BiConsumer<O, S> set) {
    return new OptionKey<>(name, Type.SECTION, keys,
      (key, value) -> value == null ? null : fromJson.apply(ConfigValues.object(key, value)), get, set, toJson::apply, copy);
  }

  /** The key's name in JSON, without its section's prefix. */
  public String name() {
    return name;
  }

  public Type type() {
    return type;
  }

  /** The keys of a {@link Type#SECTION}; empty for any other type. */
  public List<? extends OptionKey<?, ?>> sectionKeys() {
    return sectionKeys;
  }

  /**
   * Sets {@code target}'s values from {@code json}, key by key in the JSON's order.
   *
   * @param prefix the section's prefix for messages ({@code "handler."}), or {@code ""} at the top level
   * @throws IllegalArgumentException naming the key, on an unknown key or a bad value
   */
  public static <O> void readJson(JsonObject json, String prefix, List<OptionKey<O, ?>> keys, O target) {
    for (Map.Entry<String, Object> entry : json) {
      OptionKey<O, ?> key = find(keys, entry.getKey());
      if (key == null) {
        String nearest = nearest(keys, entry.getKey());
        throw new IllegalArgumentException("unknown configuration key '" + prefix + ConfigValues.escape(entry.getKey()) + "'"
          + (nearest != null ? " (did you mean '" + prefix + nearest + "'?)" : "") + "; known keys: "
          + keys.stream().map(k -> prefix + k.name).collect(Collectors.joining(", ")));
      }
      key.readInto(target, prefix + key.name, entry.getValue());
    }
  }

  /**
   * The known key a mistyped {@code name} most likely meant: the nearest by edit distance (case ignored), if it is
   * within a third of the name's length (at least 2 edits), else null.
   */
  public static <O> String nearest(List<OptionKey<O, ?>> keys, String name) {
    String lower = name.toLowerCase(java.util.Locale.ROOT);
    String best = null;
    int bestDistance = Math.max(2, name.length() / 3) + 1;
    for (OptionKey<O, ?> key : keys) {
      int d = EditDistance.between(lower, key.name.toLowerCase(java.util.Locale.ROOT));
      if (d < bestDistance) {
        best = key.name;
        bestDistance = d;
      }
    }
    return best;
  }

  private static <O> OptionKey<O, ?> find(List<OptionKey<O, ?>> keys, String name) {
    for (OptionKey<O, ?> key : keys) {
      if (key.name.equals(name)) {
        return key;
      }
    }
    return null;
  }

  private void readInto(O target, String keyPath, Object json) {
    set.accept(target, read.apply(keyPath, json));
  }

  /** {@code source}'s values as JSON, in the table's order. */
  public static <O> JsonObject toJson(O source, List<OptionKey<O, ?>> keys) {
    JsonObject json = new JsonObject();
    for (OptionKey<O, ?> key : keys) {
      json.put(key.name, key.jsonValue(source));
    }
    return json;
  }

  private Object jsonValue(O source) {
    T value = get.apply(source);
    return value == null ? null : toJson.apply(value);
  }

  /** Copies {@code from}'s values into {@code to}, sections deeply; a null value leaves {@code to}'s default. */
  public static <O> void copy(O from, O to, List<OptionKey<O, ?>> keys) {
    for (OptionKey<O, ?> key : keys) {
      key.copyValue(from, to);
    }
  }

  private void copyValue(O from, O to) {
    T value = get.apply(from);
    if (value != null) {
      set.accept(to, copy.apply(value));
    }
  }
}
