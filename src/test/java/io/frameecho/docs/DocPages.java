package io.frameecho.docs;

import java.nio.file.Path;
import java.util.List;

/** The docs' pages as text, for tests in other packages that check what the pages name. */
public final class DocPages {

  private DocPages() {
  }

  public static List<String> texts() {
    return MarkdownPages.all().stream().map(MarkdownPages::lines).map(lines -> String.join("\n", lines)).toList();
  }

  public static List<Path> paths() {
    return MarkdownPages.all();
  }
}
