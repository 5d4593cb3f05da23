package io.frameecho.docs;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every relative link of README.md and src/docs/*.md resolves: the file or directory exists, and so does its #anchor. */
class DocLinksTest {

  @Test
  void everyRelativeLinkResolves() {
    List<String> broken = new ArrayList<>();
    int checked = 0;
    for (Path page : MarkdownPages.all()) {
      for (MarkdownPages.Link link : MarkdownPages.links(page)) {
        String target = link.target();
        if (target.matches("^[a-z][a-z0-9+.-]*:.*")) {
          continue;   // https:, mailto: ...: not ours to check offline
        }
        checked++;
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path resolved = file.isEmpty() ? page : page.toAbsolutePath().getParent().resolve(file).normalize();
        if (!Files.exists(resolved)) {
          broken.add(link + ": no such file");
        } else if (anchor != null) {
          if (!resolved.toString().endsWith(".md")) {
            broken.add(link + ": an anchor into a file that is not a Markdown page");
          } else if (!MarkdownPages.anchors(resolved).contains(anchor)) {
            broken.add(link + ": no heading with the anchor #" + anchor + " in " + file);
          }
        }
      }
    }
    assertEquals(List.of(), broken);
    assertTrue(checked > 50, "the links were found (" + checked + ")");
  }

  @Test
  void anchorsFollowGitHubsRule() {
    assertEquals("vertx-compatibility", MarkdownPages.slug("Vert.x compatibility"));
    assertEquals("why-frameparser-and-not-vertxs-recordparser", MarkdownPages.slug("Why `FrameParser` and not Vert.x's `RecordParser`"));
    assertEquals("limits-what-a-client-sees", MarkdownPages.slug("Limits: what a client sees"));
    assertEquals("io_uring-again-after-the-write-batching", MarkdownPages.slug("io_uring, again after the write batching"));
  }
}
