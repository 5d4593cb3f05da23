package io.frameecho.server.impl.connection;

/** How a connection ended, once its socket closed. */
public enum Ending {
  /** Closed after everything it owed was delivered. */
  DRAINED,
  /** Closed by shutdown at once, owing nothing, and no request reached it after the close was decided. */
  CLOSED_IDLE,
  /**
   * Every answer it owed delivered, but its client sent a request after the server had chosen to close (read after
   * the FIN, or half-read then): discarded, never answered.
   */
  REQUEST_DISCARDED,
  /** Ended with answers or responses it could not deliver. */
  CUT,
  /** Moved to a successor process owing nothing (a restart with handover): its client saw no close. */
  HANDED_OVER
}
