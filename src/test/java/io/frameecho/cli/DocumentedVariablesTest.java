package io.frameecho.cli;

import io.frameecho.docs.DocPages;
import org.junit.jupiter.api.Test;

import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Every {@code FRAME_ECHO_*} variable the docs name is one the launcher reads: a key's, or one of logging's. */
class DocumentedVariablesTest {

  private static final Pattern VARIABLE = Pattern.compile("FRAME_ECHO_[A-Z0-9_]*[A-Z0-9]");
  private static final Set<String> NOT_CONFIG = Set.of("FRAME_ECHO_LOG_LEVEL", "FRAME_ECHO_LOG_FORMAT", "FRAME_ECHO_DEBUG");

  @Test
  void everyVariableTheDocsNameExists() {
    Set<String> unknown = new TreeSet<>();
    for (String text : DocPages.texts()) {
      Matcher m = VARIABLE.matcher(text);
      while (m.find()) {
        if (!EnvironmentConfig.knownVariables().contains(m.group()) && !NOT_CONFIG.contains(m.group())) {
          unknown.add(m.group());
        }
      }
    }
    assertEquals(Set.of(), unknown);
  }
}
