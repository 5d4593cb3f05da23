package io.frameecho.docs;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every Java snippet of the docs is quoted from a compiled class: a {@code ```java} block follows a
 * {@code <!-- snippet: PATH#NAME -->} line, and its text is the region between {@code // tag::NAME[]} and
 * {@code // end::NAME[]} in PATH, without the region's common indentation. Every region of the examples is quoted
 * somewhere, so no example is left that the docs no longer show.
 */
class DocSnippetsTest {

  private static final Pattern MARKER = Pattern.compile("^<!-- snippet: (\\S+)#(\\S+) -->$");
  private static final Pattern TAG = Pattern.compile("^\\s*// tag::([a-z0-9-]+)\\[\\]$");
  private static final Path EXAMPLES = Path.of("src/test/java/io/frameecho/example/EmbeddingExamples.java");

  /** The region {@code name} of {@code source}, dedented; fails when it is missing or not closed. */
  static String region(Path source, String name) throws IOException {
    List<String> lines = Files.readAllLines(source);
    int start = lines.indexOf(lines.stream().filter(l -> l.trim().equals("// tag::" + name + "[]")).findFirst()
      .orElseThrow(() -> new AssertionError(source + " has no region " + name)));
    int end = start + 1;
    while (end < lines.size() && !lines.get(end).trim().equals("// end::" + name + "[]")) {
      end++;
    }
    assertTrue(end < lines.size(), source + ": region " + name + " is not closed");
    List<String> body = lines.subList(start + 1, end);
    int indent = body.stream().filter(l -> !l.isBlank()).mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
    List<String> dedented = new ArrayList<>();
    for (String line : body) {
      dedented.add(line.isBlank() ? "" : line.substring(indent));
    }
    return String.join("\n", dedented);
  }

  @Test
  void everyJavaSnippetIsTheRegionItQuotes() throws IOException {
    List<String> problems = new ArrayList<>();
    int quoted = 0;
    for (Path page : MarkdownPages.all()) {
      for (MarkdownPages.CodeBlock block : MarkdownPages.codeBlocks(page)) {
        if (!block.language().equals("java")) {
          continue;
        }
        Matcher m = MARKER.matcher(block.lineBefore());
        if (!m.matches()) {
          problems.add(page + ":" + block.line() + ": a java block without a <!-- snippet: PATH#NAME --> line before it");
          continue;
        }
        String expected = region(Path.of(m.group(1)), m.group(2));
        if (!expected.equals(block.text())) {
          problems.add(page + ":" + block.line() + ": differs from " + m.group(1) + "#" + m.group(2) + "; the source has:\n"
            + expected);
        }
        quoted++;
      }
    }
    assertEquals(List.of(), problems);
    assertTrue(quoted >= 10, "the snippets were found (" + quoted + ")");
  }

  @Test
  void everyExampleRegionIsQuoted() throws IOException {
    Set<String> quoted = new HashSet<>();
    for (Path page : MarkdownPages.all()) {
      for (MarkdownPages.CodeBlock block : MarkdownPages.codeBlocks(page)) {
        Matcher m = MARKER.matcher(block.lineBefore());
        if (m.matches()) {
          quoted.add(Path.of(m.group(1)).normalize() + "#" + m.group(2));
        }
      }
    }
    List<String> unquoted = new ArrayList<>();
    for (String line : Files.readAllLines(EXAMPLES)) {
      Matcher m = TAG.matcher(line);
      if (m.matches() && !quoted.contains(EXAMPLES.normalize() + "#" + m.group(1))) {
        unquoted.add(m.group(1));
      }
    }
    assertEquals(List.of(), unquoted, "regions of " + EXAMPLES + " that no page quotes");
  }
}
