package io.frameecho.ops;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A Prometheus text exposition read into series: each metric name with the label sets it has, and their values. */
record Scrape(Map<String, List<Series>> byName) {

  record Series(Map<String, String> labels, double value) {
  }

  private static final Pattern LINE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)\\})? (\\S+)(?: \\S+)?$");
  private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\",?");

  static Scrape parse(String text) {
    Map<String, List<Series>> byName = new HashMap<>();
    for (String line : text.split("\n")) {
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      Matcher m = LINE.matcher(line);
      if (!m.matches()) {
        throw new IllegalArgumentException("not a sample line: " + line);
      }
      Map<String, String> labels = new HashMap<>();
      if (m.group(2) != null) {
        Matcher l = LABEL.matcher(m.group(2));
        while (l.find()) {
          labels.put(l.group(1), l.group(2));
        }
      }
      byName.computeIfAbsent(m.group(1), k -> new ArrayList<>()).add(new Series(labels, Double.parseDouble(m.group(3))));
    }
    return new Scrape(byName);
  }

  List<Series> series(String name) {
    return byName.getOrDefault(name, List.of());
  }

  /** The value of the one series of {@code name} whose labels include {@code labels}; fails when not exactly one. */
  double value(String name, Map<String, String> labels) {
    List<Series> found = series(name).stream().filter(s -> s.labels().entrySet().containsAll(labels.entrySet())).toList();
    if (found.size() != 1) {
      throw new AssertionError(found.size() + " series of " + name + " with " + labels + "; all: " + series(name));
    }
    return found.get(0).value();
  }
}
