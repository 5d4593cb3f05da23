package io.frameecho.server.impl.shared;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.Shareable;

import java.util.function.Supplier;

/**
 * The unix socket paths listened on in one Vert.x instance. Only the first claimer checks what is already at a path,
 * so a deployment's other instances do not mistake their own shared listener for another process.
 */
public final class SocketPaths implements Shareable {

  private static final String SHARED_MAP = "frame-echo.unix-sockets";

  /** The first claimer's check that the path is free to bind. */
  private final Future<Void> cleared;
  /** Guarded by the shared map's compute. */
  private int servers;

  private SocketPaths(Future<Void> cleared) {
    this.cleared = cleared;
  }

  /**
   * Claims {@code path}, running {@code check} only for the first claimer; each claim is matched by one
   * {@link #release}, whether or not the server listened.
   */
  public static Future<Void> claim(Vertx vertx, String path, Supplier<Future<Void>> check) {
    return vertx.sharedData().<String, SocketPaths>getLocalMap(SHARED_MAP).compute(path, (k, claim) -> {
      SocketPaths claimed = claim != null ? claim : new SocketPaths(check.get());
      claimed.servers++;
      return claimed;
    }).cleared;
  }

  /** Releases one claim; after the last, the next claimer checks afresh. */
  public static void release(Vertx vertx, String path) {
    vertx.sharedData().<String, SocketPaths>getLocalMap(SHARED_MAP)
      .computeIfPresent(path, (k, claim) -> --claim.servers == 0 ? null : claim);
  }
}
