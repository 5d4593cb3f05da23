package io.frameecho.docs;

import io.frameecho.server.impl.ConfigValues;
import io.frameecho.cli.TestAccess;
import io.frameecho.server.FrameEchoOptions;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * OPERATING.md's configuration table is the one description of every key: it names each key of
 * {@link io.frameecho.server.impl.ConfigValues#allKeys()} (a section's keys as {@code section.key}) exactly once, no other, and gives each
 * the default the code has, as the first code span of its default column; a key whose default in the runnable jar
 * is not the library's says both, and nothing else: {@code `true` in the jar, `false` embedded}.
 */
class ConfigurationReferenceTest {

  private static final Path OPERATING = Path.of("src", "docs", "OPERATING.md");
  private static final String BEGIN = "<!-- configuration reference";
  private static final String END = "<!-- end of the configuration reference -->";
  private static final Pattern ROW = Pattern.compile("^\\| `([^`]+)` \\| ([^|]*) \\|.*\\|$");
  private static final Pattern CODE_SPAN = Pattern.compile("`([^`]+)`");
  /** Between the two defaults of a key whose default in the jar is not the library's. */
  private static final String JAR_AND_EMBEDDED = " in the jar, ";

  /** Each key as {@code section.key}, in the table's order, with its value in {@code defaults} as JSON text. */
  private static Map<String, String> keysWithDefaults(JsonObject defaults) {
    Map<String, String> keys = new LinkedHashMap<>();
    JsonObject all = ConfigValues.allKeys();
    for (String name : all.fieldNames()) {
      if (ConfigValues.SECTIONS.contains(name)) {
        JsonObject section = defaults.getJsonObject(name);
        for (String inner : all.getJsonObject(name).fieldNames()) {
          keys.put(name + "." + inner, Json.encode(section == null ? null : section.getValue(inner)));
        }
      } else {
        keys.put(name, Json.encode(defaults.getValue(name)));
      }
    }
    return keys;
  }

  /** The table's rows: key, the first code span of its default column, the whole column. */
  private static List<String[]> rows() {
    List<String> lines = MarkdownPages.lines(OPERATING);
    int begin = -1;
    int end = -1;
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).startsWith(BEGIN)) {
        begin = i;
      } else if (lines.get(i).equals(END)) {
        end = i;
      }
    }
    if (begin < 0 || end < begin) {
      throw new AssertionError(OPERATING + " has no configuration reference between '" + BEGIN + "' and '" + END + "'");
    }
    List<String[]> rows = new ArrayList<>();
    for (String line : lines.subList(begin + 1, end)) {
      Matcher row = ROW.matcher(line);
      if (row.matches()) {
        Matcher span = CODE_SPAN.matcher(row.group(2));
        rows.add(new String[] {row.group(1), span.find() ? span.group(1) : "(no default given)", row.group(2).strip()});
      }
    }
    return rows;
  }

  @Test
  void theTableNamesEveryKeyOnceAndNoOther() {
    List<String> documented = rows().stream().map(r -> r[0]).toList();
    assertEquals(List.copyOf(keysWithDefaults(new FrameEchoOptions().toJson()).keySet()).stream().sorted().toList(),
      documented.stream().sorted().toList(),
      "the keys of " + OPERATING + "'s configuration table against ConfigValues.allKeys()");
  }

  @Test
  void eachDefaultIsTheCodes() {
    Map<String, String> library = keysWithDefaults(new FrameEchoOptions().toJson());
    Map<String, String> jar = keysWithDefaults(TestAccess.jarDefaults());
    Map<String, String[]> documented = new LinkedHashMap<>();
    for (String[] row : rows()) {
      documented.put(row[0], row);
    }
    Map<String, String> wrong = new LinkedHashMap<>();
    library.forEach((key, value) -> {
      String[] row = documented.get(key);
      if (row == null) {
        return;
      }
      if (jar.get(key).equals(value)) {
        if (!row[1].equals(value) || row[2].contains(JAR_AND_EMBEDDED)) {
          wrong.put(key, "the table says " + row[2] + ", the code " + value + " (in the jar and embedded)");
        }
      } else {
        String both = "`" + jar.get(key) + "`" + JAR_AND_EMBEDDED + "`" + value + "` embedded";
        if (!row[2].equals(both)) {
          wrong.put(key, "the table says " + row[2] + ", the code " + both);
        }
      }
    });
    assertEquals(Map.of(), wrong);
  }
}
