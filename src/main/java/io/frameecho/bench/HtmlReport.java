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
    StringBuilder html = new StringBuilder();
    html.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>").append(escape(title)).append("</title>\n")
      .append("<style>body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin-top:1em}")
      .append("td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}th{background:#f4f4f4}td:first-child{text-align:left}")
      .append(".swatch{display:inline-block;width:12px;height:12px;margin-right:6px;vertical-align:middle}</style></head><body>\n")
      .append("<h1>").append(escape(title)).append("</h1>\n")
      .append("<p>Latency by percentile (log scales). Each line is one run; lower is better.</p>\n");
    chart(html, results);
    table(html, results);
    html.append("</body></html>\n");
    return html.toString();
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
    html.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>%n", LEFT, TOP, plotWidth, plotHeight))
      .append("</svg>\n");
  }

  private static void table(StringBuilder html, List<JsonObject> results) {
    html.append("<table><tr><th>run</th><th>requests/s</th><th>p50 us</th><th>p90 us</th><th>p99 us</th><th>p99.9 us</th>")
      .append("<th>max us</th><th>MB/s sent</th><th>MB/s received</th><th>connections</th><th>pipeline</th><th>size B</th>")
      .append("<th>errors</th><th>mismatches</th><th>connection failures</th></tr>\n");
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
