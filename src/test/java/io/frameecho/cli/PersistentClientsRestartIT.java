package io.frameecho.cli;

import io.frameecho.client.FrameClient;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.SelfSignedCertificate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * OPERATING.md's restart under clients that stay connected, as a pooled application keeps them: {@link #CLIENTS}
 * connections each send a 16-byte request every {@link #PERIOD_MS} ms (one in flight at most), check its echo, and
 * reconnect at once when the connection ends. A second process joins the port (reusePort), then the first gets
 * SIGTERM (or SIGKILL). A request sent in the moment the old process closes its connection is lost unless the
 * client re-sends it: what the clients count as lost must be what the old process's shutdown line counts, and
 * clients that re-send ({@link FrameClient#resendIdempotent}) lose none. With SIGKILL the server counts nothing; the
 * clients count what they lost. Fewer clients than the 1,000 (-Drestart.persistent=1000 runs those): four
 * restarts, two processes each, stay within a minute of CI.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class PersistentClientsRestartIT {

  private static final Path JAR = Path.of(System.getProperty("restart.jar", "target/frame-echo.jar"));
  private static final int CLIENTS = Integer.getInteger("restart.persistent", 200);
  private static final long PERIOD_MS = 100;
  private static final Pattern SHUTDOWN_COUNTS =
    Pattern.compile("(\\d+) connection\\(s\\) drained, (\\d+) closed idle, (\\d+) lost a request, (\\d+) cut");

  private final JarProcesses processes = new JarProcesses(JAR);
  private Vertx vertx;

  @AfterEach
  void stop() throws Exception {
    processes.stopAll();
    if (vertx != null) {
      vertx.close().await(20, TimeUnit.SECONDS);
    }
  }

  /** What the clients saw. */
  static final class Tally {
    final AtomicLong sent = new AtomicLong();
    final AtomicLong answered = new AtomicLong();
    final AtomicLong lost = new AtomicLong();
    final AtomicLong wrong = new AtomicLong();
    /** Connections that ended while the clients were running. */
    final AtomicLong closes = new AtomicLong();
    /** Summed once the clients have stopped. */
    final AtomicLong resent = new AtomicLong();
    /** Clients answered for a request sent after the signal. */
    final Set<Integer> servedAfterSignal = ConcurrentHashMap.newKeySet();
    /** The first failures, for the figures. */
    final List<String> samples = new CopyOnWriteArrayList<>();
    volatile long signalNanos = Long.MAX_VALUE;

    @Override
    public String toString() {
      return "sent " + sent + ", answered " + answered + ", lost " + lost + ", re-sent " + resent + ", wrong " + wrong
        + ", connections ended " + closes
        + (samples.isEmpty() ? "" : ", e.g. " + samples);
    }
  }

  /** One persistent client: a request every period when none is in flight; a new connection when one ends. */
  private final class Client {
    final int id;
    final Tally tally;
    final NetClientOptions options;
    final int port;
    final boolean resend;
    final AtomicBoolean stopped;
    FrameClient connection;
    boolean inFlight;
    /** Requests re-sent by this client's earlier connections. */
    volatile long resentBefore;
    long seq;

    Client(int id, Tally tally, NetClientOptions options, int port, boolean resend, AtomicBoolean stopped) {
      this.id = id;
      this.tally = tally;
      this.options = options;
      this.port = port;
      this.resend = resend;
      this.stopped = stopped;
    }

    void connect() {
      if (stopped.get()) {
        return;
      }
      FrameClient.connect(vertx, options, "127.0.0.1", port, 1 << 10).onComplete(ar -> {
        if (ar.failed()) {
          vertx.setTimer(10, t -> connect());
          return;
        }
        FrameClient client = ar.result().resendIdempotent(resend);
        connection = client;
        client.closeHandler(v -> {
          if (!stopped.get()) {
            tally.closes.incrementAndGet();
          }
          resentBefore += client.requestsResent();
          if (connection == client) {
            connection = null;
            connect();
          }
        });
      });
    }

    void tick() {
      if (inFlight || connection == null || stopped.get()) {
        return;
      }
      FrameClient client = connection;
      long sentNanos = System.nanoTime();
      Buffer payload = Buffer.buffer().appendLong(id).appendLong(++seq);
      inFlight = true;
      tally.sent.incrementAndGet();
      client.request(payload).onComplete(ar -> {
        inFlight = false;
        if (ar.succeeded()) {
          tally.answered.incrementAndGet();
          if (!ar.result().equals(payload)) {
            tally.wrong.incrementAndGet();
          }
          if (sentNanos >= tally.signalNanos) {
            tally.servedAfterSignal.add(id);
          }
        } else if (!stopped.get()) {
          tally.lost.incrementAndGet();
          if (tally.samples.size() < 3) {
            tally.samples.add(ar.cause().getMessage());
          }
        }
      });
    }
  }

  private record Outcome(Tally tally, String shutdownLine, int exit, List<String> oldLog) {
    /** The old process's lines that say how its shutdown went beyond the counts (handover, warnings), for a failure. */
    String oldProcessSaid() {
      return String.join("\n", oldLog.stream().filter(l -> l.contains("handover") || l.contains("WARN") || l.contains("ERROR")).toList());
    }

    /** The old process's counts: drained, closed idle, lost a request, cut. */
    int[] counts() {
      Matcher m = SHUTDOWN_COUNTS.matcher(shutdownLine);
      assertTrue(m.find(), shutdownLine);
      return new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3)),
        Integer.parseInt(m.group(4))};
    }
  }

  /** Persistent clients across one restart: the second process starts, then the first gets {@code kill} or SIGTERM. */
  private Outcome restart(boolean tls, boolean resend, boolean kill) throws Exception {
    return restart(tls, resend, kill, null);
  }

  /** As above; both processes with {@code handoverSocket} set to {@code handoverSocket} when it is not null. */
  private Outcome restart(boolean tls, boolean resend, boolean kill, Path handoverSocket) throws Exception {
    assertTrue(Files.isRegularFile(JAR), "run after mvn package");
    assumeTrue(System.getProperty("os.name").toLowerCase().contains("linux"), "reusePort groups as Linux has them");
    vertx = Vertx.vertx();
    int port = JarProcesses.freePort();
    NetClientOptions options = new NetClientOptions().setTcpNoDelay(true);
    String tlsConf = "";
    if (tls) {
      SelfSignedCertificate certificate = SelfSignedCertificate.create("localhost");
      tlsConf = ",\"tls\":{\"certPath\":\"" + certificate.certificatePath() + "\",\"keyPath\":\"" + certificate.privateKeyPath() + "\"}";
      // Hundreds of handshakes at once on a loaded machine can take longer than the default 10 s: not what is tested here.
      options.setSslHandshakeTimeout(60).setSsl(true).setHostnameVerificationAlgorithm("").setTrustOptions(new PemTrustOptions().addCertPath(certificate.certificatePath()));
    }
    String conf = "{\"host\":\"127.0.0.1\",\"port\":" + port + ",\"transport\":\"epoll\",\"netServerOptions\":{\"reusePort\":true"
      + (tls ? ",\"sslHandshakeTimeout\":60" : "") + "}"
      + (handoverSocket == null ? "" : ",\"handoverSocket\":\"" + handoverSocket + "\"")
      + tlsConf + "}";
    List<String> oldLog = new CopyOnWriteArrayList<>();
    Process old = processes.start(conf, oldLog);
    JarProcesses.awaitLine(oldLog, "frame-echo listening on");

    Tally tally = new Tally();
    AtomicBoolean stopped = new AtomicBoolean();
    List<Client> clients = new CopyOnWriteArrayList<>();
    for (int i = 0; i < CLIENTS; i++) {
      Client client = new Client(i, tally, options, port, resend, stopped);
      clients.add(client);
      vertx.runOnContext(v -> {
        client.connect();
        vertx.setPeriodic(PERIOD_MS, t -> client.tick());
      });
    }
    awaitUntil(() -> tally.answered.get() >= 3L * CLIENTS, "every client answered a few times: " + tally);
    List<String> newLog = new CopyOnWriteArrayList<>();
    processes.start(conf, newLog);
    JarProcesses.awaitLine(newLog, "frame-echo listening on");
    long lostBefore = tally.lost.get();
    tally.signalNanos = System.nanoTime();
    if (kill) {
      old.destroyForcibly();
    } else {
      old.destroy();
    }
    assertTrue(old.waitFor(60, TimeUnit.SECONDS), "the old process did not stop");
    awaitUntil(() -> tally.servedAfterSignal.size() == CLIENTS, "every client served again: " + tally);
    stopped.set(true);
    // Read once the clients have stopped sending: a figure, from the clients' own counts.
    clients.forEach(c -> {
      FrameClient now = c.connection;
      tally.resent.addAndGet(c.resentBefore + (now == null ? 0 : now.requestsResent()));
    });
    assertEquals(0, lostBefore, "nothing lost before the restart: " + tally + "; old process's lines: "
      + oldLog.subList(Math.max(0, oldLog.size() - 10), oldLog.size()));
    assertEquals(0, tally.wrong.get(), "every echo byte-exact: " + tally);
    String line = oldLog.stream().filter(l -> l.contains("shut down")).findFirst().orElse("");
    System.out.println("persistent clients across a restart (" + CLIENTS + ", tls " + tls + ", resend " + resend + ", "
      + (kill ? "SIGKILL" : "SIGTERM") + "): " + tally + "; old process: " + line);
    return new Outcome(tally, line, old.exitValue(), oldLog);
  }

  /** Waits, bounded, checking every 20 ms. */
  private static void awaitUntil(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, "not within 60 s: " + what);
      Thread.sleep(20);
    }
  }

  /** Without re-sending, what the clients lost is exactly what the old process counts as lost. */
  @Test
  void sigtermCountsEveryRequestItLeftUnanswered() throws Exception {
    Outcome outcome = restart(false, false, false);
    assertEquals(143, outcome.exit());
    int[] counts = outcome.counts();
    assertEquals(0, counts[3], "nothing cut: " + outcome.shutdownLine());
    assertEquals(outcome.tally().lost.get(), counts[2], "the clients' loss is the server's count: " + outcome.tally());
  }

  /** Clients that re-send lose nothing across the restart. */
  @Test
  void sigtermLosesNothingForClientsThatResend() throws Exception {
    Outcome outcome = restart(false, true, false);
    assertEquals(0, outcome.tally().lost.get(), outcome.tally() + "; " + outcome.shutdownLine());
    assertEquals(outcome.counts()[2], outcome.tally().resent.get(), "each request the server counts lost was re-sent: " + outcome.tally());
  }

  /**
   * A TLS session cannot move: it drains, and none is lost with re-sending. Without, the old process counts no more
   * than the clients lost, but may count fewer (runs on 2026-11-27: 135 and 196 counted where 200 were lost; what it
   * read after its close was a request's frame header each time). The re-sent tally is not compared with TLS: it read
   * 0, 128, 144 and 200 in runs where the old process counted 200.
   */
  @Test
  void tlsLossIsCountedAndNoneWithResending() throws Exception {
    Outcome counted = restart(true, false, false);
    assertTrue(counted.counts()[2] <= counted.tally().lost.get(), counted.tally() + "; " + counted.shutdownLine());
    stop();
    Outcome resent = restart(true, true, false);
    assertEquals(0, resent.tally().lost.get(), resent.tally() + "; " + resent.shutdownLine());
  }

  /**
   * With a handover socket the old process hands its connections to the new one: no client sees its connection end,
   * nothing is lost or re-sent, and the old process counts every connection as handed over.
   */
  @Test
  void sigtermWithHandoverLosesNothingAndEndsNoConnection(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
    Outcome outcome = restart(false, false, false, dir.resolve("handover.sock"));
    assertEquals(143, outcome.exit());
    Tally tally = outcome.tally();
    assertEquals(0, tally.lost.get(), tally + "; " + outcome.shutdownLine());
    assertEquals(0, tally.closes.get(), "connections ended: " + tally + "; " + outcome.shutdownLine() + "\n" + outcome.oldProcessSaid());
    assertTrue(outcome.shutdownLine().contains(" " + CLIENTS + " handed over to the successor"), outcome.shutdownLine());
  }

  /** SIGKILL: the server counts nothing; every client gets back in, and counts what it lost. */
  @Test
  void sigkillLossIsCountedByTheClients() throws Exception {
    Outcome outcome = restart(false, false, true);
    assertEquals(137, outcome.exit());
    Tally tally = outcome.tally();
    // Each request was answered, lost, or still in flight when the clients stopped (one per client at most).
    long unaccounted = tally.sent.get() - tally.answered.get() - tally.lost.get();
    assertTrue(unaccounted >= 0 && unaccounted <= CLIENTS, tally.toString());
  }
}
