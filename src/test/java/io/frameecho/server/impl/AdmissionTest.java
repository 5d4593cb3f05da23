package io.frameecho.server.impl;

import io.frameecho.server.impl.shared.ConnectionLimits;
import io.vertx.core.net.SocketAddress;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Who waits for a slot, and the address a client is limited by. (Serving, giving way and refusals: IdleGiveWayTest.) */
class AdmissionTest {

  @Test
  void noMoreWaitThanCouldBeGivenWayToOrAFewInASmallHouse() {
    assertTrue(Admission.mayWait(true, false, 0, 0));
    assertTrue(Admission.mayWait(true, false, Admission.FEWEST_WAITING - 1, 2), "a few, however few connections");
    assertFalse(Admission.mayWait(true, false, Admission.FEWEST_WAITING, 2));
    assertTrue(Admission.mayWait(true, false, 99, 100));
    assertFalse(Admission.mayWait(true, false, 100, 100), "no more than there are connections");
  }

  @Test
  void nobodyWaitsWhenNobodyGivesWayOrTheServerStops() {
    assertFalse(Admission.mayWait(false, false, 0, 100), "idleGiveWayMs 0");
    assertFalse(Admission.mayWait(true, true, 0, 100), "stopping");
  }

  @Test
  void aClientIsLimitedByItsIpAddressAndUnixPeersShareOne() {
    assertEquals("127.0.0.1", ConnectionLimits.addressKey(SocketAddress.inetSocketAddress(1234, "127.0.0.1")));
    assertEquals("unix", ConnectionLimits.addressKey(SocketAddress.domainSocketAddress("/tmp/frame-echo.sock")));
    assertEquals("unknown", ConnectionLimits.addressKey(null));
  }
}
