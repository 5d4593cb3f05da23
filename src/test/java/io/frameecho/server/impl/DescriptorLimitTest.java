package io.frameecho.server.impl;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The start-up check of the descriptor limit against maxConnections. */
class DescriptorLimitTest {

  @Test
  void aLimitBelowTheNeedIsReportedOncePerNeed() {
    assertEquals(1_000 + DescriptorLimit.RESERVED, DescriptorLimit.needed(1_000));
    assertNull(DescriptorLimit.shortfall(1_000, 1_000 + DescriptorLimit.RESERVED), "enough");
    assertNull(DescriptorLimit.shortfall(0, 10), "no limit on connections: nothing to compare");
    assertNull(DescriptorLimit.shortfall(1_000, -1), "the JVM does not say");
    // Large needs, so that no other test of this JVM has warned for more already.
    assertNotNull(DescriptorLimit.shortfall(900_000, 1024));
    assertNull(DescriptorLimit.shortfall(900_000, 1024), "once");
    assertNotNull(DescriptorLimit.shortfall(950_000, 1024), "again for a larger need");
  }

  @Test
  void theProcessLimitIsKnownHere() {
    assertTrue(DescriptorLimit.processLimit() > 0, "Linux and a HotSpot JVM say their limit");
  }
}
