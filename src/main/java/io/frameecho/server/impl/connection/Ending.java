package io.frameecho.server.impl.connection;

/** How a connection ended, once its socket closed. */
public enum Ending {
  /** Closed after everything it owed was delivered. */
  DRAINED,
  /** Closed by shutdown at once, owing nothing, with no request after the close was decided. */
  CLOSED_IDLE,
  /** Every answer delivered, but a request that came after the server chose to close was discarded. */
  REQUEST_DISCARDED,
  /** Ended with answers or responses it could not deliver. */
  CUT,
  /** Handed to a successor process on restart, owing nothing; its client saw no close. */
  HANDED_OVER
}
