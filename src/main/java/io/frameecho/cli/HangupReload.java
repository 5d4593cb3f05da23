package io.frameecho.cli;

import io.frameecho.server.FrameEchoServer;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * SIGHUP in the runnable jar: every frame-echo server re-reads its TLS files (a certificate renewed on disk), as nginx
 * and HAProxy reload on it. One {@code INFO} line when the new certificate is in use for new handshakes, or one
 * {@code ERROR} line with the reason while the servers keep the previous one. SIGHUP never stops the server (the
 * JVM's default would, with status 129). The library itself handles no signal: an application calls
 * {@link FrameEchoServer#reloadTls(Vertx)} when it wants.
 */
final class HangupReload {

  private static final Logger log = LoggerFactory.getLogger(Main.class);
  /** The launcher's Vert.x, once started; a SIGHUP before that finds nothing to reload. */
  private static volatile Vertx vertx;

  private HangupReload() {
  }

  /**
   * Takes SIGHUP from the JVM's default (exit); as early as the launcher starts, so that no SIGHUP stops it. A process
   * started with SIGHUP ignored ({@code nohup}) keeps it ignored: HotSpot installs no handler for a shutdown signal
   * the process inherited as ignored and returns {@code SIG_IGN} (JDK 17 and 25 alike), so the reload never runs;
   * with {@code tls} on, one WARN line says so.
   */
  static void install(boolean tls) {
    SignalHandler previous;
    try {
      previous = Signal.handle(new Signal("HUP"), signal -> reload());
    } catch (IllegalArgumentException | UnsupportedOperationException e) {
      // No SIGHUP on this platform (Windows), or the JVM keeps it (-Xrs): nothing to take over.
      return;
    }
    if (previous == SignalHandler.SIG_IGN && tls) {
      log.warn("SIGHUP is ignored by this process (started under nohup?): TLS files are not reloaded on HUP; restart it to "
        + "use a renewed certificate, or start it with SIGHUP not ignored (setsid or a service manager keep a terminal's "
        + "hang-up away without nohup)");
    }
  }

  static void vertxStarted(Vertx started) {
    vertx = started;
  }

  private static void reload() {
    Vertx current = vertx;
    if (current == null) {
      log.info("SIGHUP: still starting, nothing to reload");
      return;
    }
    FrameEchoServer.reloadTls(current).onComplete(reloaded -> {
      if (reloaded.failed()) {
        log.error("SIGHUP: TLS files not reloaded, the previous certificate stays in use: {}", reloaded.cause().getMessage());
      } else if (reloaded.result() == 0) {
        log.info("SIGHUP: no server serves TLS, nothing to reload (SIGHUP re-reads the TLS files only)");
      } else {
        log.info("SIGHUP: TLS files re-read; new handshakes use them on {} server instance(s), open connections keep theirs",
          reloaded.result());
      }
    });
  }
}
