package io.frameecho.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The project's Markdown pages (README.md and src/docs/*.md), read the way GitHub renders them, as far as the docs
 * tests need: headings and their anchors, links, fenced code blocks. Paths are relative to the project's root,
 * the tests' working directory.
 */
final class MarkdownPages {

  private static final Pattern HEADING = Pattern.compile("^(#{1,6})\\s+(.*?)\\s*#*\\s*$");
  /** {@code [text](target)}, and images; the text may hold code spans and brackets of one level. */
  private static final Pattern LINK = Pattern.compile("!?\\[(?:[^\\[\\]]|\\[[^\\]]*\\])*\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
  private static final Pattern CODE_SPAN = Pattern.compile("(`+)(.+?)\\1");

  private MarkdownPages() {
  }

  /** README.md and every page under src/docs. */
  static List<Path> all() {
    List<Path> pages = new ArrayList<>();
    pages.add(Path.of("README.md"));
    try (Stream<Path> docs = Files.list(Path.of("src", "docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return pages;
  }

  static List<String> lines(Path page) {
    try {
      return Files.readAllLines(page);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Whether each line is inside a fenced code block (the fences themselves count as inside). */
  static boolean[] fenced(List<String> lines) {
    boolean[] inside = new boolean[lines.size()];
    boolean open = false;
    for (int i = 0; i < lines.size(); i++) {
      boolean fence = lines.get(i).startsWith("```");
      inside[i] = open || fence;
      if (fence) {
        open = !open;
      }
    }
    return inside;
  }

  /** The anchors GitHub gives the page's headings: lower case, punctuation dropped, spaces as hyphens, -1, -2 for repeats. */
  static Set<String> anchors(Path page) {
    List<String> lines = lines(page);
    boolean[] fenced = fenced(lines);
    Set<String> anchors = new LinkedHashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    for (int i = 0; i < lines.size(); i++) {
      Matcher m = HEADING.matcher(lines.get(i));
      if (!fenced[i] && m.matches()) {
        String slug = slug(m.group(2));
        int n = seen.merge(slug, 1, Integer::sum);
        anchors.add(n == 1 ? slug : slug + "-" + (n - 1));
      }
    }
    return anchors;
  }

  static String slug(String heading) {
    String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1").toLowerCase(Locale.ROOT);
    StringBuilder slug = new StringBuilder();
    text.codePoints().forEach(c -> {
      if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
        slug.appendCodePoint(c);
      } else if (c == ' ') {
        slug.append('-');
      }
    });
    return slug.toString();
  }

  /** A link on a page: its line (1-based) and its target as written. */
  record Link(Path page, int line, String target) {
    @Override
    public String toString() {
      return page + ":" + line + ": (" + target + ")";
    }
  }

  /** Every link outside code blocks and code spans. */
  static List<Link> links(Path page) {
    List<String> lines = lines(page);
    boolean[] fenced = fenced(lines);
    List<Link> links = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      if (fenced[i]) {
        continue;
      }
      String text = CODE_SPAN.matcher(lines.get(i)).replaceAll("code");
      Matcher m = LINK.matcher(text);
      while (m.find()) {
        links.add(new Link(page, i + 1, m.group(1)));
      }
    }
    return links;
  }

  /** A fenced code block: the line (1-based) of its opening fence, its language, its text, and the line before the fence. */
  record CodeBlock(Path page, int line, String language, String text, String lineBefore) {
  }

  static List<CodeBlock> codeBlocks(Path page) {
    List<String> lines = lines(page);
    List<CodeBlock> blocks = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).startsWith("```")) {
        int end = i + 1;
        while (end < lines.size() && !lines.get(end).startsWith("```")) {
          end++;
        }
        blocks.add(new CodeBlock(page, i + 1, lines.get(i).substring(3).trim(), String.join("\n", lines.subList(i + 1, end)),
          i > 0 ? lines.get(i - 1) : ""));
        i = end;
      }
    }
    return blocks;
  }
}
