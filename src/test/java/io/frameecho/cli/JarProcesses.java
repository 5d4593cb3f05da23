package io.frameecho.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The packaged jar run as processes by the restart tests: started, their lines read, stopped. */
final class JarProcesses {

  private final Path jar;
  private final List<Process> processes = new ArrayList<>();

  JarProcesses(Path jar) {
    this.jar = jar;
  }

  /** Stops every process started (SIGTERM, then SIGKILL after 20 s). */
  void stopAll() throws InterruptedException {
    for (Process p : processes) {
      p.destroy();
      if (!p.waitFor(20, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
  }

  /** Starts the jar; its output (logs on stderr) goes to a file, read into {@code log} until the process ends. */
  Process start(String conf, List<String> log) throws IOException {
    Path output = Files.createTempFile("frame-echo-restart", ".log");
    output.toFile().deleteOnExit();
    ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
      "-jar", jar.toString(), "-conf", conf).redirectErrorStream(true).redirectOutput(output.toFile());
    builder.environment().keySet().removeIf(name -> name.startsWith("FRAME_ECHO_"));
    Process p = builder.start();
    processes.add(p);
    Thread reader = new Thread(() -> {
      try (BufferedReader r = Files.newBufferedReader(output)) {
        while (true) {
          boolean ended = !p.isAlive();
          String line;
          while ((line = r.readLine()) != null) {
            append(log, line);
          }
          if (ended) {
            break;
          }
          try {
            p.onExit().get(20, TimeUnit.MILLISECONDS);
          } catch (java.util.concurrent.TimeoutException stillRunning) {
            // read what it wrote since
          }
        }
      } catch (Exception ignored) {
        // the test ended
      }
      append(log, "<eof>");
    });
    reader.setDaemon(true);
    reader.start();
    return p;
  }

  /** Waits (bounded) until {@code log} has a line containing {@code text}; the reader notifies {@code log} of each line. */
  static void awaitLine(List<String> log, String text) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    synchronized (log) {
      while (log.stream().noneMatch(l -> l.contains(text))) {
        assertTrue(!log.contains("<eof>"), "the process exited: " + String.join("\n", log));
        long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        assertTrue(leftMs > 0, "no '" + text + "' within 30 s: " + String.join("\n", log));
        log.wait(leftMs);
      }
    }
  }

  /** Adds a line to {@code log} and wakes {@link #awaitLine}. */
  private static void append(List<String> log, String line) {
    synchronized (log) {
      log.add(line);
      log.notifyAll();
    }
  }

  /**
   * A free loopback port that a reuseport listener can bind: a port that earlier connections used as their local
   * port may still have some in TIME_WAIT, and a reuseport listener cannot bind over those where a plain one can. So
   * a candidate is bound plainly (nobody else listens: a reuseport probe would join another's group) and then with
   * {@code SO_REUSEPORT}, as the servers will.
   */
  static int freePort() throws IOException {
    for (int i = 0; i < 100; i++) {
      int port;
      try (ServerSocket plain = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        port = plain.getLocalPort();
      }
      try (java.nio.channels.ServerSocketChannel probe = java.nio.channels.ServerSocketChannel.open()) {
        probe.setOption(java.net.StandardSocketOptions.SO_REUSEPORT, true);
        probe.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        return port;
      } catch (IOException timeWait) {
        // try another
      }
    }
    throw new IOException("no port a reuseport listener can bind");
  }
}
