package io.frameecho.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The restart procedure of src/docs/OPERATING.md on the packaged jar: a server runs on a fixed port with {@code reusePort} and metrics
 * on; a second process starts on the same ports, and once it says it is listening the first gets SIGTERM; meanwhile
 * client threads loop over short connections (connect, three pipelined frames, three echoes read and checked, close).
 * With Linux's {@code net.ipv4.tcp_migrate_req=1} no connection may be lost. With 0, the kernel resets the connections
 * queued on the old listener when it closes, so refusals and resets are counted and reported, not asserted; what is
 * asserted then is what the server guarantees: no connection it accepted ends before its answers (no cut), every echo
 * is byte-exact, both processes serve, and the old one stops cleanly, naming the signal.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RestartIT {

  /** The jar under test; {@code -Drestart.jar} measures another build (an older one, say) the same way. */
  private static final Path JAR = Path.of(System.getProperty("restart.jar", "target/frame-echo.jar"));
  private static final Path MIGRATE_REQ = Path.of("/proc/sys/net/ipv4/tcp_migrate_req");
  /** Client threads ({@code -Drestart.threads}). */
  private static final int CLIENT_THREADS = Integer.getInteger("restart.threads", 6);
  /** Connections before the new process starts, and after the old one has exited ({@code -Drestart.connections}). */
  private static final int BEFORE = Integer.getInteger("restart.connections", 600);
  private static final int AFTER = BEFORE;
  /** A bound on the whole loop, whatever happens. */
  private static final int AT_MOST = 200_000;

  private final JarProcesses processes = new JarProcesses(JAR);

  @AfterEach
  void stopProcesses() throws InterruptedException {
    processes.stopAll();
  }

  /** How the client connections ended. */
  static final class Tally {
    final AtomicInteger total = new AtomicInteger();
    final AtomicInteger ok = new AtomicInteger();
    final AtomicInteger refused = new AtomicInteger();
    final AtomicInteger reset = new AtomicInteger();
    /** The stream ended before the three echoes. */
    final AtomicInteger cut = new AtomicInteger();
    final AtomicInteger wrong = new AtomicInteger();
    final List<String> samples = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** One connection ended, however. */
    synchronized void ended() {
      total.incrementAndGet();
      notifyAll();
    }

    /** Waits (bounded) until {@code count} connections have ended. */
    synchronized void awaitTotal(int count) throws InterruptedException {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (total.get() < count) {
        long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        assertTrue(leftMs > 0, "the clients did not reach " + count + " connections: " + this);
        wait(leftMs);
      }
    }

    int lost() {
      return refused.get() + reset.get() + cut.get() + wrong.get();
    }

    @Override
    public String toString() {
      return "total " + total + ", ok " + ok + ", refused " + refused + ", reset " + reset + ", cut " + cut + ", wrong " + wrong
        + (samples.isEmpty() ? "" : ", e.g. " + samples);
    }
  }

  @Test
  void aRestartOnTheSamePortLosesNoConnection() throws Exception {
    assertTrue(Files.isRegularFile(JAR), "run after mvn package");
    assumeTrue(System.getProperty("os.name").toLowerCase().contains("linux"), "reusePort groups as Linux has them");
    boolean migrates = Files.isReadable(MIGRATE_REQ) && Files.readString(MIGRATE_REQ).trim().equals("1");
    int port = JarProcesses.freePort();
    int metricsPort = JarProcesses.freePort();
    // Metrics on, as the procedure must work with them (-Drestart.metrics=false measures without).
    boolean metrics = Boolean.parseBoolean(System.getProperty("restart.metrics", "true"));
    String conf = "{\"host\":\"127.0.0.1\",\"port\":" + port + ",\"transport\":\"epoll\",\"netServerOptions\":{\"reusePort\":true},"
      + "\"metrics\":{\"enabled\":" + metrics + ",\"host\":\"127.0.0.1\",\"port\":" + metricsPort + "}}";

    List<String> oldLog = new java.util.concurrent.CopyOnWriteArrayList<>();
    Process old = processes.start(conf, oldLog);
    JarProcesses.awaitLine(oldLog, "frame-echo listening on");

    Tally tally = new Tally();
    AtomicBoolean stop = new AtomicBoolean();
    List<Thread> clients = new ArrayList<>();
    for (int i = 0; i < CLIENT_THREADS; i++) {
      int id = i;
      Thread t = new Thread(() -> loop(port, id, tally, stop), "restart-client-" + i);
      t.setDaemon(true);
      t.start();
      clients.add(t);
    }
    try {
      tally.awaitTotal(BEFORE);
      List<String> newLog = new java.util.concurrent.CopyOnWriteArrayList<>();
      Process replacement = processes.start(conf, newLog);
      JarProcesses.awaitLine(newLog, "frame-echo listening on");
      int atSignal = tally.total.get();
      old.destroy(); // SIGTERM
      assertTrue(old.waitFor(60, TimeUnit.SECONDS), "the old process did not stop");
      assertEquals(143, old.exitValue(), String.join("\n", oldLog));
      int afterExit = tally.total.get();
      tally.awaitTotal(afterExit + AFTER);
      stop.set(true);
      for (Thread t : clients) {
        t.join(30_000);
      }
      String figures = "tcp_migrate_req=" + (migrates ? 1 : 0) + ": " + tally + " (" + (afterExit - atSignal)
        + " while the old process stopped)";
      System.out.println("restart across two processes, " + figures);

      String shutdownLine = oldLog.stream().filter(l -> l.contains("shut down")).findFirst().orElse("");
      assertTrue(shutdownLine.contains("shut down on SIGTERM:"), "the shutdown line names the signal: " + String.join("\n", oldLog));
      assertTrue(newLog.stream().noneMatch(l -> l.contains("Address already in use")), String.join("\n", newLog));
      assertTrue(replacement.isAlive(), "the new process serves on: " + String.join("\n", newLog));
      assertEquals(0, tally.wrong.get(), "every echo byte-exact: " + figures);
      assertEquals(0, tally.cut.get(), "no accepted connection ends before its answers: " + figures);
      if (migrates) {
        assertEquals(0, tally.lost(), "no connection lost: " + figures);
      }
    } finally {
      stop.set(true);
    }
  }

  /** Connects, sends three frames in one write, reads the three echoes, closes; again, until told to stop. */
  private static void loop(int port, int id, Tally tally, AtomicBoolean stop) {
    int n = 0;
    while (!stop.get() && tally.total.get() < AT_MOST) {
      byte[][] payloads = new byte[3][];
      for (int i = 0; i < 3; i++) {
        payloads[i] = ("c" + id + "-" + n + "-" + i).getBytes(StandardCharsets.UTF_8);
      }
      n++;
      ByteBuffer request = ByteBuffer.allocate(3 * 4 + Arrays.stream(payloads).mapToInt(p -> p.length).sum()).order(ByteOrder.LITTLE_ENDIAN);
      for (byte[] p : payloads) {
        request.putInt(p.length).put(p);
      }
      try (Socket socket = new Socket()) {
        socket.setSoTimeout(20_000);
        socket.connect(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port), 10_000);
        OutputStream out = socket.getOutputStream();
        out.write(request.array());
        out.flush();
        InputStream in = socket.getInputStream();
        boolean same = true;
        for (byte[] p : payloads) {
          byte[] header = in.readNBytes(4);
          if (header.length < 4) {
            throw new EOFException("end of stream before an echo");
          }
          int length = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN).getInt();
          if (length != p.length) {
            same = false;
            break;
          }
          byte[] echoed = in.readNBytes(length);
          if (echoed.length < length) {
            throw new EOFException("end of stream inside an echo");
          }
          same &= Arrays.equals(p, echoed);
        }
        (same ? tally.ok : tally.wrong).incrementAndGet();
      } catch (ConnectException e) {
        count(tally, tally.refused, e);
      } catch (EOFException e) {
        count(tally, tally.cut, e);
      } catch (SocketException e) {
        count(tally, e.getMessage() != null && e.getMessage().contains("refused") ? tally.refused : tally.reset, e);
      } catch (IOException e) {
        count(tally, tally.reset, e);
      }
      tally.ended();
    }
  }

  private static void count(Tally tally, AtomicInteger counter, Exception e) {
    counter.incrementAndGet();
    if (tally.samples.size() < 3) {
      tally.samples.add(e.toString());
    }
  }


}
