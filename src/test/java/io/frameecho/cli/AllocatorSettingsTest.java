package io.frameecho.cli;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The jar keeps two largest frames' worth of Netty's freed chunks for reuse, never fewer than Netty would. */
class AllocatorSettingsTest {

  @Test
  void theQueueHoldsTwoLargestFramesInWholeChunks() {
    assertEquals(10, AllocatorSettings.chunkReuseQueue(32 << 20, 1), "32 MiB + its header spans 5 chunks of 8 MiB");
    assertEquals(2, AllocatorSettings.chunkReuseQueue(1 << 20, 1), "a 1 MiB frame: one chunk each");
    assertEquals(2, AllocatorSettings.chunkReuseQueue((8 << 20) - 4, 1), "exactly one chunk, header included");
    assertEquals(4, AllocatorSettings.chunkReuseQueue((8 << 20) - 3, 1), "one byte more spans two");
    assertEquals(16, AllocatorSettings.chunkReuseQueue(1 << 20, 8), "Netty's own default (2 per processor) when larger");
  }

  @Test
  void anOperatorsOwnSettingWins() {
    String before = System.getProperty(AllocatorSettings.CHUNK_REUSE_QUEUE);
    try {
      System.setProperty(AllocatorSettings.CHUNK_REUSE_QUEUE, "3");
      AllocatorSettings.apply(32 << 20);
      assertEquals("3", System.getProperty(AllocatorSettings.CHUNK_REUSE_QUEUE));
      System.clearProperty(AllocatorSettings.CHUNK_REUSE_QUEUE);
      AllocatorSettings.apply(32 << 20);
      assertEquals(String.valueOf(AllocatorSettings.chunkReuseQueue(32 << 20, Runtime.getRuntime().availableProcessors())),
        System.getProperty(AllocatorSettings.CHUNK_REUSE_QUEUE));
    } finally {
      if (before == null) {
        System.clearProperty(AllocatorSettings.CHUNK_REUSE_QUEUE);
      } else {
        System.setProperty(AllocatorSettings.CHUNK_REUSE_QUEUE, before);
      }
    }
  }
}
