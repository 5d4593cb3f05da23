package io.frameecho.server.impl.shared;

import java.math.BigInteger;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Comma-separated CIDR ranges or addresses, as in {@code proxyTrustedPeers}; literals only, never a name lookup. */
public final class PeerRanges {

  private record Range(byte[] network, int prefix) {
  }

  private final List<Range> ranges;

  private PeerRanges(List<Range> ranges) {
    this.ranges = ranges;
  }

  /**
   * Parses a comma-separated list.
   *
   * @throws IllegalArgumentException naming the entry that is not an address literal with an optional prefix length
   */
  public static PeerRanges parse(String list) {
    List<Range> ranges = new ArrayList<>();
    for (String entry : list.split(",", -1)) {
      String cidr = entry.trim();
      if (cidr.isEmpty()) {
        if (list.isBlank()) {
          break;
        }
        throw new IllegalArgumentException("an empty entry");
      }
      int slash = cidr.indexOf('/');
      String address = slash < 0 ? cidr : cidr.substring(0, slash);
      byte[] bytes = literal(address);
      if (bytes == null) {
        throw new IllegalArgumentException(quote(cidr) + " is not an IP address or a CIDR range (10.0.0.0/8, 2001:db8::/32)");
      }
      int prefix = bytes.length * 8;
      if (slash >= 0) {
        try {
          prefix = Integer.parseInt(cidr.substring(slash + 1));
        } catch (NumberFormatException e) {
          prefix = -1;
        }
        if (prefix < 0 || prefix > bytes.length * 8) {
          throw new IllegalArgumentException(quote(cidr) + ": the prefix length must be 0 to " + bytes.length * 8);
        }
      }
      ranges.add(new Range(bytes, prefix));
    }
    return new PeerRanges(List.copyOf(ranges));
  }

  /** Quotes {@code text} as JSON so the error stays one line. */
  private static String quote(String text) {
    return io.vertx.core.json.Json.encode(text);
  }

  /** The bytes of an IPv4 or IPv6 literal, or null for anything that would need a lookup. */
  private static byte[] literal(String address) {
    String a = address.toLowerCase(Locale.ROOT);
    boolean v4 = a.matches("\\d{1,3}(\\.\\d{1,3}){3}");
    boolean v6 = a.contains(":") && a.matches("[0-9a-f:.]+");
    if (!v4 && !v6) {
      return null;
    }
    try {
      byte[] bytes = InetAddress.getByName(a).getAddress();
      return v4 && bytes.length != 4 ? null : bytes;
    } catch (UnknownHostException e) {
      return null;
    }
  }

  /** Whether the list is empty. */
  public boolean isEmpty() {
    return ranges.isEmpty();
  }

  /** Whether {@code ip} (an address literal) is in one of the ranges; an IPv4-mapped IPv6 address counts as IPv4. */
  public boolean contains(String ip) {
    byte[] bytes = literal(ip);
    if (bytes == null) {
      return false;
    }
    if (bytes.length == 16 && isV4Mapped(bytes)) {
      bytes = java.util.Arrays.copyOfRange(bytes, 12, 16);
    }
    for (Range range : ranges) {
      if (range.network().length == bytes.length && samePrefix(range.network(), bytes, range.prefix())) {
        return true;
      }
    }
    return false;
  }

  private static boolean isV4Mapped(byte[] b) {
    for (int i = 0; i < 10; i++) {
      if (b[i] != 0) {
        return false;
      }
    }
    return b[10] == (byte) 0xff && b[11] == (byte) 0xff;
  }

  private static boolean samePrefix(byte[] a, byte[] b, int prefix) {
    BigInteger mask = prefix == 0 ? BigInteger.ZERO
      : BigInteger.ONE.shiftLeft(prefix).subtract(BigInteger.ONE).shiftLeft(a.length * 8 - prefix);
    return new BigInteger(1, a).and(mask).equals(new BigInteger(1, b).and(mask));
  }
}
