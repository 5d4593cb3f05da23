package io.frameecho.docs;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * DESIGN.md's path of one echo frame stays true: each {@code `file:line` `Class.method`} it lists names a line that
 * still declares that method. When code moves, update the line numbers in DESIGN.md, "The path of one echo frame".
 */
class DesignPathTest {

  private static final Pattern STEP = Pattern.compile("`(src/main/java/[\\w/]+\\.java):(\\d+)` `(?:\\w+\\.)?(\\w+)`");

  @Test
  void eachListedLineDeclaresItsMethod() throws IOException {
    String design = Files.readString(Path.of("src/docs/DESIGN.md"));
    List<String> wrong = new ArrayList<>();
    int checked = 0;
    Matcher step = STEP.matcher(design);
    while (step.find()) {
      checked++;
      String file = step.group(1);
      int line = Integer.parseInt(step.group(2));
      String method = step.group(3);
      List<String> lines = Files.readAllLines(Path.of(file));
      String found = line <= lines.size() ? lines.get(line - 1) : "";
      if (!declares(found, method)) {
        wrong.add(file + ":" + line + " should declare " + method + "(...), holds: " + found.strip());
      }
    }
    assertEquals(List.of(), wrong, "DESIGN.md's path of one echo frame");
    assertTrue(checked >= 10, "the path's steps were found (" + checked + ")");
  }

  @Test
  void aCallIsNotADeclaration() {
    assertTrue(declares("  private void handleWrite() {", "handleWrite"));
    assertTrue(declares("  public static FrameParser reading(ReadStream<Buffer> source, int max) {", "reading"));
    assertTrue(!declares("    handleWrite();", "handleWrite"));
    assertTrue(!declares("    return handleWrite();", "handleWrite"));
    assertTrue(!declares("    socket.write(frames);", "write"));
  }

  /** A method declaration: modifiers, a return type, the name and its parenthesis. */
  static boolean declares(String line, String method) {
    return Pattern.compile("^\\s*(?:@\\w+\\s+)?(?:(?:public|private|protected|static|final|synchronized|default)\\s+)*"
      + "(?!(?:return|new|throw|else)\\s)[A-Za-z_][\\w.]*(?:<[^()]*>)?(?:\\[])*\\s+" + method + "\\(").matcher(line).find();
  }
}
