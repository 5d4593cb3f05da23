package io.frameecho.bench;

import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Payload sizes of the requests: a fixed size ({@code 16}, {@code 4KiB}) or a range drawn uniformly
 * ({@code 16-4096}, {@code 1KiB-1MiB}). Suffixes: {@code B}, {@code KiB}/{@code K}, {@code MiB}/{@code M}.
 */
public final class SizeRange {

  private final int min;
  private final int max;

  public SizeRange(int min, int max) {
    if (min < 0 || max < min) {
      throw new IllegalArgumentException("size range " + min + "-" + max + " is empty or negative");
    }
    this.min = min;
    this.max = max;
  }

  /**
   * @throws IllegalArgumentException with a message fit for the user
   */
  public static SizeRange parse(String text) {
    String t = text.trim();
    int dash = t.indexOf('-', 1);
    if (dash < 0) {
      int size = parseSize(t);
      return new SizeRange(size, size);
    }
    int min = parseSize(t.substring(0, dash));
    int max = parseSize(t.substring(dash + 1));
    if (max < min) {
      throw new IllegalArgumentException("size range '" + text + "': the maximum is below the minimum");
    }
    return new SizeRange(min, max);
  }

  private static int parseSize(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    long unit = 1;
    if (t.endsWith("kib") || t.endsWith("k")) {
      unit = 1024;
      t = t.substring(0, t.length() - (t.endsWith("kib") ? 3 : 1));
    } else if (t.endsWith("mib") || t.endsWith("m")) {
      unit = 1024 * 1024;
      t = t.substring(0, t.length() - (t.endsWith("mib") ? 3 : 1));
    } else if (t.endsWith("b")) {
      t = t.substring(0, t.length() - 1);
    }
    long value;
    try {
      value = Long.parseLong(t.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("'" + text + "' is not a size (examples: 16, 4KiB, 1MiB)");
    }
    if (value < 0) {
      throw new IllegalArgumentException("'" + text + "': a size cannot be negative");
    }
    long bytes = value * unit;
    if (bytes > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("'" + text + "' is over the protocol's 2 GiB limit");
    }
    return (int) bytes;
  }

  public int min() {
    return min;
  }

  public int max() {
    return max;
  }

  public boolean isFixed() {
    return min == max;
  }

  /** A size drawn from the range. */
  public int next(SplittableRandom random) {
    return isFixed() ? min : min + random.nextInt(max - min + 1);
  }

  @Override
  public String toString() {
    return isFixed() ? min + " B" : min + "-" + max + " B";
  }
}
