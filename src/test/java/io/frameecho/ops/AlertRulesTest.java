package io.frameecho.ops;

import io.frameecho.server.FrameEchoVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.vertx.micrometer.VertxPrometheusOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The example alert rules ({@code conf/prometheus-alerts.yml}) against what the server really exposes: every
 * metric a rule's expression names is in a scrape of a freshly started server (before any traffic: every
 * counter is there from the start), with every label the rule matches on, groups by or prints, and every label
 * value it matches. Names and labels only; thresholds are the operator's.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AlertRulesTest {

  /** Labels Prometheus adds to every scraped series itself, from the scrape target. */
  private static final Set<String> TARGET_LABELS = Set.of("instance", "job");
  private static final Set<String> PROMQL_WORDS = Set.of("by", "without", "on", "ignoring", "group_left", "group_right",
    "and", "or", "unless", "bool", "offset");
  private static final Pattern EXPR = Pattern.compile("(?m)^\\s+expr:\\s*(.+)$");
  private static final Pattern GROUPING = Pattern.compile("\\b(?:by|without|on|ignoring)\\s*\\(([^)]*)\\)");
  private static final Pattern SELECTOR = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*(\\{[^}]*\\})?\\s*(\\()?");
  private static final Pattern MATCHER = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!=|!~|=)\\s*\"([^\"]*)\"");
  private static final Pattern TEMPLATE_LABEL = Pattern.compile("\\$labels\\.([a-zA-Z_][a-zA-Z0-9_]*)");

  private final Vertx vertx = Vertx.builder().with(new VertxOptions().setMetricsOptions(new MicrometerMetricsOptions()
    .setEnabled(true).setJvmMetricsEnabled(true).setPrometheusOptions(new VertxPrometheusOptions().setEnabled(true)))).build();

  @AfterEach
  void close() throws Exception {
    await(vertx.close());
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  /** One rule: the metrics its expression selects (with their label matchers), and the labels it groups by or prints. */
  private record Rule(String expr, List<Selector> selectors, Set<String> labels) {
  }

  private record Selector(String metric, List<String[]> matchers) {
  }

  private static List<Rule> rules(String yaml) {
    List<Rule> rules = new ArrayList<>();
    // Commented-out rules (a placeholder for a meter still to come) are not rules.
    String active = yaml.lines().filter(l -> !l.stripLeading().startsWith("#")).reduce("", (a, b) -> a + b + "\n");
    String[] blocks = active.split("(?m)^\\s+- alert:");
    for (int i = 1; i < blocks.length; i++) {
      Matcher e = EXPR.matcher(blocks[i]);
      assertTrue(e.find(), "a rule without expr: " + blocks[i]);
      String expr = e.group(1);
      Set<String> labels = new LinkedHashSet<>();
      Matcher g = GROUPING.matcher(expr);
      while (g.find()) {
        for (String label : g.group(1).split(",")) {
          labels.add(label.strip());
        }
      }
      Matcher t = TEMPLATE_LABEL.matcher(blocks[i]);
      while (t.find()) {
        labels.add(t.group(1));
      }
      String rest = GROUPING.matcher(expr).replaceAll(" ").replaceAll("\\[[^\\]]*\\]", " ");
      List<Selector> selectors = new ArrayList<>();
      Matcher s = SELECTOR.matcher(rest);
      while (s.find()) {
        String word = s.group(1);
        if (s.group(3) != null && s.group(2) == null || PROMQL_WORDS.contains(word)) {
          continue; // a function call or an operator
        }
        List<String[]> matchers = new ArrayList<>();
        if (s.group(2) != null) {
          Matcher m = MATCHER.matcher(s.group(2));
          while (m.find()) {
            matchers.add(new String[] {m.group(1), m.group(2), m.group(3)});
          }
        }
        selectors.add(new Selector(word, matchers));
      }
      rules.add(new Rule(expr, selectors, labels));
    }
    return rules;
  }

  @Test
  void everyMetricAndLabelTheRulesUseIsInTheScrape() throws Exception {
    FrameEchoVerticle verticle = new FrameEchoVerticle();
    JsonObject config = new JsonObject().put("host", "127.0.0.1").put("port", 0)
      .put("metrics", new JsonObject().put("enabled", true).put("endpoint", true).put("host", "127.0.0.1").put("port", 0));
    await(vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(config)));
    // Held until the answer is in: Vert.x closes a client nothing refers to any more, in the middle of a request.
    HttpClient http = vertx.createHttpClient();
    String text;
    try {
      text = await(http.request(HttpMethod.GET, verticle.metricsPort(), "127.0.0.1", "/metrics")
        .compose(req -> req.send()).compose(HttpClientResponse::body)).toString();
    } finally {
      await(http.close());
    }
    Scrape scrape = Scrape.parse(text);

    List<Rule> rules = rules(Files.readString(Path.of("conf", "prometheus-alerts.yml")));
    assertEquals(10, rules.size(), "rules read from the file");
    for (Rule rule : rules) {
      assertFalse(rule.selectors().isEmpty(), "no metric found in " + rule.expr());
      Set<String> labelsOfRule = new LinkedHashSet<>();
      for (Selector selector : rule.selectors()) {
        List<Scrape.Series> series = scrape.series(selector.metric());
        assertFalse(series.isEmpty(), selector.metric() + " (in " + rule.expr() + ") is not in the scrape");
        series.forEach(s -> labelsOfRule.addAll(s.labels().keySet()));
        for (String[] m : selector.matchers()) {
          assertTrue(series.stream().anyMatch(s -> s.labels().containsKey(m[0])),
            selector.metric() + " has no label " + m[0] + " (in " + rule.expr() + ")");
          if (m[1].equals("=")) {
            assertTrue(series.stream().anyMatch(s -> m[2].equals(s.labels().get(m[0]))),
              selector.metric() + "{" + m[0] + "=\"" + m[2] + "\"} is not in the scrape (in " + rule.expr() + ")");
          }
        }
      }
      for (String label : rule.labels()) {
        assertTrue(TARGET_LABELS.contains(label) || labelsOfRule.contains(label),
          "label " + label + " of " + rule.expr() + " is on none of its metrics: " + labelsOfRule);
      }
    }
  }
}
