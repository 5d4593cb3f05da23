package io.frameecho.server.impl.shared;

import io.vertx.core.Vertx;
import io.vertx.core.shareddata.Shareable;

/**
 * The addresses ({@code host:port}, or a unix socket path) the frame-echo servers of one Vert.x instance serve, each
 * with the deployment that serves it. Vert.x hands one listener's connections to every server that listens on the same
 * address in turn, so a second deployment there would answer on the same port with other handlers and other limits:
 * only the instances of the deployment that claimed an address may share it. Port 0 (a port of its own) is never
 * claimed.
 */
public final class ServedAddresses implements Shareable {

  private static final String SHARED_MAP = "frame-echo.served-addresses";

  /** The deployment id, or an object of the one server outside any deployment. */
  private final Object owner;
  /** Servers holding this claim; changed inside the local map's {@code compute}, which serialises it. */
  private int servers;

  private ServedAddresses(Object owner) {
    this.owner = owner;
  }

  /**
   * Claims {@code address} for {@code owner} (a deployment id, or an object of a server's own); every successful claim
   * is matched by one {@link #release}.
   *
   * @return null when claimed, else the owner already serving it
   */
  public static Object claim(Vertx vertx, String address, Object owner) {
    Object[] other = new Object[1];
    vertx.sharedData().<String, ServedAddresses>getLocalMap(SHARED_MAP).compute(address, (k, claim) -> {
      if (claim != null && !claim.owner.equals(owner)) {
        other[0] = claim.owner;
        return claim;
      }
      ServedAddresses claimed = claim != null ? claim : new ServedAddresses(owner);
      claimed.servers++;
      return claimed;
    });
    return other[0];
  }

  /** A server that claimed {@code address} is done with it. */
  public static void release(Vertx vertx, String address) {
    vertx.sharedData().<String, ServedAddresses>getLocalMap(SHARED_MAP)
      .computeIfPresent(address, (k, claim) -> --claim.servers == 0 ? null : claim);
  }
}
