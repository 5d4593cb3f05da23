package io.frameecho.server.impl.shared;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.Shareable;

import java.util.function.Supplier;

/**
 * The unix socket paths the frame-echo servers of one Vert.x instance listen on, each with how many servers share it
 * (the instances of a deployment share one listener, as Vert.x shares it). The first server to claim a path runs the
 * check of what is already there; the others wait for the same check instead of mistaking their own deployment's
 * listener for another process.
 */
public final class SocketPaths implements Shareable {

  private static final String SHARED_MAP = "frame-echo.unix-sockets";

  /** The first claimer's check: the path is free to bind, or why not. */
  private final Future<Void> cleared;
  /** Servers holding this claim; changed inside the local map's {@code compute}, which serialises it. */
  private int servers;

  private SocketPaths(Future<Void> cleared) {
    this.cleared = cleared;
  }

  /**
   * Claims {@code path} for a server about to listen on it: {@code check} (run by the first claimer only) or the
   * first claimer's. Every claim is matched by one {@link #release}, whether or not the server listened.
   */
  public static Future<Void> claim(Vertx vertx, String path, Supplier<Future<Void>> check) {
    return vertx.sharedData().<String, SocketPaths>getLocalMap(SHARED_MAP).compute(path, (k, claim) -> {
      SocketPaths claimed = claim != null ? claim : new SocketPaths(check.get());
      claimed.servers++;
      return claimed;
    }).cleared;
  }

  /** A server that claimed {@code path} is done with it; the last one lets the next server check afresh. */
  public static void release(Vertx vertx, String path) {
    vertx.sharedData().<String, SocketPaths>getLocalMap(SHARED_MAP)
      .computeIfPresent(path, (k, claim) -> --claim.servers == 0 ? null : claim);
  }
}
