package io.frameecho.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.List;
import java.util.Locale;

/**
 * A self-contained HTML page (inline SVG, no script, nothing fetched) with the latency percentile chart
 * of one or several results and their summary table, so runs against two servers or with two settings
 * can be compared at a glance. Works from the JSON documents {@code bench --json} writes.
 */
public final class HtmlReport {

  private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  private static final int WIDTH = 900;
  private static final int HEIGHT = 440;
  private static final int LEFT = 100;
  private static final int RIGHT = 40;
  private static final int TOP = 20;
  private static final int BOTTOM = 50;
  /** The x axis ends at 99.999 %: five nines, as log10(1 / (1 - p)). */
  private static final double MAX_NINES = 5;
  private static final String[] NINES_LABELS = {"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"};

  private HtmlReport() {
  }

  public static String render(String title, List<JsonObject> results) {
    return render(title, results, null);
  }

  /**
   * @param generatedBy a line saying when, by which version and with which command the page was made, or null
   */
  public static String render(String title, List<JsonObject> results, String generatedBy) {
    StringBuilder html = new StringBuilder();
    html.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
      .append("<meta name=\"viewport\" content=\"width=device-width\"><title>").append(escape(title)).append("</title>\n")
      // Fits a 1200 px window: the chart scales down, the table wraps its headers and labels instead of overflowing.
      .append("<style>body{font-family:sans-serif;margin:1.5em;color:#222;max-width:1400px}h1{font-size:1.5em}")
      .append("svg{max-width:100%;height:auto}table{border-collapse:collapse;margin-top:1em;font-size:13px;width:100%}")
      .append("td,th{border:1px solid #ccc;padding:3px 5px;text-align:right}th{background:#f4f4f4;font-weight:600}")
      .append("td:first-child,th:first-child{text-align:left;max-width:16em;overflow-wrap:anywhere}td{white-space:nowrap}td:first-child{white-space:normal}")
      .append(".swatch{display:inline-block;width:12px;height:12px;margin-right:6px;vertical-align:middle}")
      .append(".runs{font-size:13px;color:#444}.runs code{font-size:12px;overflow-wrap:anywhere}</style></head><body>\n")
      .append("<h1>").append(escape(title)).append("</h1>\n")
      .append("<p>Latency by percentile (log scales). Each line is one run; lower is better.</p>\n");
    chart(html, results);
    table(html, results);
    runs(html, results);
    if (generatedBy != null) {
      html.append("<p class=\"runs\">").append(escape(generatedBy)).append("</p>\n");
    }
    html.append("</body></html>\n");
    return html.toString();
  }

  /** Each run's date, version and command line, when its JSON has them. */
  private static void runs(StringBuilder html, List<JsonObject> results) {
    html.append("<ul class=\"runs\">\n");
    for (int i = 0; i < results.size(); i++) {
      JsonObject r = results.get(i);
      html.append("<li><span class=\"swatch\" style=\"background:").append(color(i)).append("\"></span>")
        .append(escape(r.getString("label", "run " + (i + 1))))
        .append(": ").append(escape(r.getString("date", "date unknown")))
        .append(", frame-echo ").append(escape(r.getString("frameEchoVersion", "version unknown")))
        .append(r.getBoolean("tls", false) ? ", TLS" : "");
      String command = r.getString("commandLine");
      if (command != null) {
        html.append(": <code>").append(escape(command)).append("</code>");
      }
      html.append("</li>\n");
    }
    html.append("</ul>\n");
  }

  private static void chart(StringBuilder html, List<JsonObject> results) {
    double minLatency = Double.MAX_VALUE;
    double maxLatency = 0;
    for (JsonObject r : results) {
      for (Object o : r.getJsonArray("percentiles", new JsonArray())) {
        double micros = ((JsonArray) o).getDouble(1);
        minLatency = Math.min(minLatency, Math.max(micros, 0.1));
        maxLatency = Math.max(maxLatency, micros);
      }
    }
    if (maxLatency == 0) {
      html.append("<p>No latencies were recorded.</p>\n");
      return;
    }
    double lowDecade = Math.floor(Math.log10(minLatency));
    double highDecade = Math.max(lowDecade + 1, Math.ceil(Math.log10(maxLatency)));
    int plotWidth = WIDTH - LEFT - RIGHT;
    int plotHeight = HEIGHT - TOP - BOTTOM;
    html.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-size=\"12\">%n", WIDTH, HEIGHT));
    for (int nines = 0; nines <= MAX_NINES; nines++) {
      double x = LEFT + plotWidth * nines / MAX_NINES;
      String label = NINES_LABELS[nines];
      html.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>", x, TOP, x, TOP + plotHeight))
        .append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n", x, TOP + plotHeight + 18, label));
    }
    for (double decade = lowDecade; decade <= highDecade; decade++) {
      double y = TOP + plotHeight * (1 - (decade - lowDecade) / (highDecade - lowDecade));
      html.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>", LEFT, y, LEFT + plotWidth, y))
        .append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s us</text>%n", LEFT - 6, y + 4, formatMicros(Math.pow(10, decade))));
    }
    html.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">percentile</text>%n", LEFT + plotWidth / 2, HEIGHT - 8));
    for (int i = 0; i < results.size(); i++) {
      StringBuilder points = new StringBuilder();
      for (Object o : results.get(i).getJsonArray("percentiles", new JsonArray())) {
        JsonArray point = (JsonArray) o;
        double percentile = Math.min(point.getDouble(0), 100 - 100 / Math.pow(10, MAX_NINES));
        double nines = -Math.log10(1 - percentile / 100);
        double latency = Math.max(point.getDouble(1), Math.pow(10, lowDecade));
        double x = LEFT + plotWidth * nines / MAX_NINES;
        double y = TOP + plotHeight * (1 - (Math.log10(latency) - lowDecade) / (highDecade - lowDecade));
        points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
      }
      html.append(String.format(Locale.ROOT, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>%n", color(i), points.toString().trim()));
    }
    html.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>%n", LEFT, TOP, plotWidth, plotHeight));
    legend(html, results);
    html.append("</svg>\n");
  }

  /** The colour key, in the plot's bottom-right corner (percentile lines rise to the right, so it is seldom crossed). */
  private static void legend(StringBuilder html, List<JsonObject> results) {
    int lineHeight = 18;
    int longest = 0;
    for (int i = 0; i < results.size(); i++) {
      longest = Math.max(longest, legendLabel(results.get(i), i).length());
    }
    int plotWidth = WIDTH - LEFT - RIGHT;
    int plotHeight = HEIGHT - TOP - BOTTOM;
    int width = Math.min(plotWidth - 20, 40 + longest * 7);
    int height = results.size() * lineHeight + 8;
    int x = LEFT + plotWidth - width - 10;
    int top = TOP + plotHeight - height - 10;
    html.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"white\" fill-opacity=\"0.9\" stroke=\"#bbb\"/>%n",
      x, top, width, height));
    for (int i = 0; i < results.size(); i++) {
      int y = top + 4 + lineHeight * i + lineHeight / 2;
      html.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"/>",
          x + 8, y, x + 30, y, color(i)))
        .append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">%s</text>%n", x + 36, y + 4, escape(legendLabel(results.get(i), i))));
    }
  }

  private static String legendLabel(JsonObject result, int i) {
    String label = result.getString("label", "run " + (i + 1));
    return label.length() > 90 ? label.substring(0, 89) + "\u2026" : label;
  }

  private static void table(StringBuilder html, List<JsonObject> results) {
    html.append("<table><tr><th>run</th><th>requests/s</th><th>p50 us</th><th>p90 us</th><th>p99 us</th><th>p99.9 us</th>")
      .append("<th>max us</th><th>MB/s sent</th><th>MB/s received</th><th>connec&shy;tions</th><th>pipe&shy;line</th><th>size B</th>")
      .append("<th>errors</th><th>mis&shy;matches</th><th>connection failures</th></tr>\n");
    for (int i = 0; i < results.size(); i++) {
      JsonObject r = results.get(i);
      JsonObject l = r.getJsonObject("latencyMicros", new JsonObject());
      String size = r.getValue("sizeMin") + (r.getValue("sizeMin").equals(r.getValue("sizeMax")) ? "" : "-" + r.getValue("sizeMax"));
      html.append("<tr><td><span class=\"swatch\" style=\"background:").append(color(i)).append("\"></span>")
        .append(escape(r.getString("label", "run " + (i + 1)))).append("</td>")
        .append(cell(String.format(Locale.ROOT, "%,.0f", r.getDouble("requestsPerSecond", 0.0))))
        .append(cell(l.getValue("p50"))).append(cell(l.getValue("p90"))).append(cell(l.getValue("p99")))
        .append(cell(l.getValue("p999"))).append(cell(l.getValue("max")))
        .append(cell(r.getValue("sentMBps"))).append(cell(r.getValue("receivedMBps")))
        .append(cell(r.getValue("connections"))).append(cell(r.getValue("pipeline"))).append(cell(size))
        .append(cell(r.getValue("errors"))).append(cell(r.getValue("mismatches"))).append(cell(r.getValue("connectionFailures")))
        .append("</tr>\n");
    }
    html.append("</table>\n");
  }

  private static String cell(Object value) {
    return "<td>" + escape(String.valueOf(value)) + "</td>";
  }

  private static String color(int i) {
    return COLORS[i % COLORS.length];
  }

  private static String formatMicros(double micros) {
    return micros >= 1 ? String.format(Locale.ROOT, "%,.0f", micros) : String.format(Locale.ROOT, "%.1f", micros);
  }

  static String escape(String text) {
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
  }
}
