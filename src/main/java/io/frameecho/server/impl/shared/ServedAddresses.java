package io.frameecho.server.impl.shared;

import io.vertx.core.Vertx;
import io.vertx.core.shareddata.Shareable;

/**
 * The addresses served in one Vert.x instance and the deployment owning each. Vert.x round-robins a shared listener's
 * connections across all servers on that address, so only one deployment's instances may share an address.
 */
public final class ServedAddresses implements Shareable {

  private static final String SHARED_MAP = "frame-echo.served-addresses";

  /** The deployment id, or a standalone server's own object. */
  private final Object owner;
  /** Guarded by the shared map's compute. */
  private int servers;

  private ServedAddresses(Object owner) {
    this.owner = owner;
  }

  /**
   * Claims {@code address} for {@code owner}; each successful claim is matched by one {@link #release}.
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

  /** Releases one claim on {@code address}. */
  public static void release(Vertx vertx, String address) {
    vertx.sharedData().<String, ServedAddresses>getLocalMap(SHARED_MAP)
      .computeIfPresent(address, (k, claim) -> --claim.servers == 0 ? null : claim);
  }
}
