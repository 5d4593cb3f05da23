package io.frameecho.cli;

/**
 * The runnable jar's one setting of Netty's allocator, made before Vert.x starts: its chunk reuse queue holds the
 * chunks of two of the largest frames. Netty 4.2's adaptive allocator carves buffers of up to 1 MiB out of 8 MiB
 * chunks and keeps only {@code 2 x processors} freed chunks for reuse (2 for a server pinned to one core); a 32 MiB
 * frame's pieces fill five, so without room for them each large frame allocated and zeroed chunks anew (2.3 per
 * 32 MiB request, measured; see BENCHMARKS.md). What this keeps is bounded: at most twice the largest frame, rounded
 * up to whole chunks, of freed direct memory (80 MiB at the default {@code maxFrameSize}).
 * <p>
 * A JVM-wide choice, so only the jar makes it, and only when the operator has not set the property: an embedding
 * application's allocator is its own (EMBEDDING.md says what to set).
 */
final class AllocatorSettings {

  static final String CHUNK_REUSE_QUEUE = "io.netty.allocator.chunkReuseQueueCapacity";
  /**
   * Netty 4.2's largest chunk. With a maximum heap of 512 MiB or less Netty makes 2 MiB chunks and pools nothing over
   * 256 KiB, so the 1 MiB pieces are not pooled and this setting changes nothing for them.
   */
  static final long CHUNK_SIZE = 8 << 20;

  private AllocatorSettings() {
  }

  /** Freed chunks to keep: two largest frames' worth, header included, and never fewer than Netty's own default. */
  static int chunkReuseQueue(int maxFrameSize, int processors) {
    long chunksPerFrame = (maxFrameSize + 4L + CHUNK_SIZE - 1) / CHUNK_SIZE;
    return (int) Math.max(2L * processors, 2 * chunksPerFrame);
  }

  /** Sets the property unless it is set already (by {@code -D} or {@code JAVA_TOOL_OPTIONS}). */
  static void apply(int maxFrameSize) {
    if (System.getProperty(CHUNK_REUSE_QUEUE) == null) {
      System.setProperty(CHUNK_REUSE_QUEUE,
        String.valueOf(chunkReuseQueue(maxFrameSize, Runtime.getRuntime().availableProcessors())));
    }
  }
}
