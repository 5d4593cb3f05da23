package io.frameecho.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs the packaged jar the way the README does: the Vert.x launcher with {@code -conf} and
 * {@code -instances}, and the {@code client} subcommand against it.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class LauncherIT {

  private static final Path JAR = Path.of("target", "frame-echo.jar");
  private static final Pattern LISTENING = Pattern.compile("frame-echo listening on [^ ]+:(\\d+) ");

  private final List<Process> processes = new ArrayList<>();

  @AfterEach
  void stopProcesses() throws InterruptedException {
    for (Process p : processes) {
      p.destroy();
      if (!p.waitFor(20, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
  }

  /** Starts the jar; its stderr lines go to the returned queue. */
  private BlockingQueue<String> start(List<String> lines, String... args) throws IOException {
    return start(java.util.Map.of(), lines, args);
  }

  private BlockingQueue<String> start(java.util.Map<String, String> env, List<String> lines, String... args) throws IOException {
    List<String> command = new ArrayList<>(List.of(javaBin(), "-jar", JAR.toString()));
    command.addAll(List.of(args));
    return start(command, env, lines);
  }

  private BlockingQueue<String> start(List<String> command, java.util.Map<String, String> env, List<String> lines) throws IOException {
    ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD);
    builder.environment().putAll(env);
    Process p = builder.start();
    processes.add(p);
    BlockingQueue<String> queue = new LinkedBlockingQueue<>();
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          lines.add(line);
          queue.add(line);
        }
      } catch (IOException ignored) {
        // the process ended
      }
      queue.add("<eof>");
    });
    reader.setDaemon(true);
    reader.start();
    return queue;
  }

  private static String javaBin() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  /** Waits (bounded) for the next start-up line and returns the port it names. */
  private static int nextListeningPort(BlockingQueue<String> lines) throws InterruptedException {
    while (true) {
      String line = lines.poll(30, TimeUnit.SECONDS);
      assertNotNull(line, "no start-up line within 30 s");
      assertNotEquals("<eof>", line, "the server exited during start-up");
      Matcher m = LISTENING.matcher(line);
      if (m.find()) {
        return Integer.parseInt(m.group(1));
      }
    }
  }

  private static String runClient(int port, String... messages) throws Exception {
    List<String> command = new ArrayList<>(List.of(javaBin(), "-jar", JAR.toString(), "client", "--port", String.valueOf(port)));
    command.addAll(List.of(messages));
    Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS), "client did not finish");
    assertEquals(0, p.exitValue(), "client exit status; output: " + out);
    return out;
  }

  @Test
  void launcherServesWithInlineConfigAndTheClientTalksToIt() throws Exception {
    assertTrue(Files.isRegularFile(JAR), "run after mvn package");
    List<String> log = new ArrayList<>();
    BlockingQueue<String> lines = start(log, "-conf", "{\"host\":\"127.0.0.1\",\"port\":0,\"maxFrameSize\":1048576}");
    int port = nextListeningPort(lines);
    assertEquals("len:5 data:hello\nlen:0 data:\n", runClient(port, "hello", "").replace("\r", ""));
  }

  /**
   * On the jar's own transport (epoll on Linux): a client that half-closes while the server has stopped reading
   * it (its write queue is full of a large echo) gets every response, then the end of stream. Found by a
   * hostile trial: with reading turned on again after the input ended, epoll failed and the last responses
   * were dropped.
   */
  @Test
  void aHalfCloseWhileReadingIsPausedStillGetsEveryResponse() throws Exception {
    List<String> log = new ArrayList<>();
    int port = nextListeningPort(start(log, "-conf", "{\"host\":\"127.0.0.1\",\"port\":0}"));
    java.io.ByteArrayOutputStream request = new java.io.ByteArrayOutputStream();
    for (byte[] payload : new byte[][] {new byte[4 << 20], "x".getBytes(StandardCharsets.UTF_8), new byte[0],
        "yz".getBytes(StandardCharsets.UTF_8)}) {
      request.write(java.nio.ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(payload.length).array());
      request.write(payload);
    }
    byte[] sent = request.toByteArray();
    for (int round = 0; round < 5; round++) {
      try (java.net.Socket socket = new java.net.Socket("127.0.0.1", port)) {
        socket.setSoTimeout(30_000);
        // Send everything, then half-close, before reading a byte: the server's write queue fills and it stops reading.
        Thread writer = new Thread(() -> {
          try {
            socket.getOutputStream().write(sent);
            socket.shutdownOutput();
          } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        });
        writer.start();
        byte[] echoed = socket.getInputStream().readAllBytes();
        writer.join(30_000);
        assertEquals(sent.length, echoed.length, "round " + round + ": every response, then the end of stream");
        assertTrue(java.util.Arrays.equals(sent, echoed), "round " + round + ": byte-exact");
      }
    }
  }

  /**
   * From the second hostile trial, on the jar's own transport: clients that send 6 MiB of 64 KiB frames through a
   * small receive buffer, half-close, and read only 2 s later (slow readers) got their echo cut short, then a FIN
   * (5 of 60 here): on Netty's epoll from 4.2.13 on, a channel whose input ended left epoll, and the first write
   * that had to wait for the socket failed. Every byte must come back, then the end of the stream.
   */
  @Test
  void slowReadersThatHalfClosedGetEveryResponse() throws Exception {
    List<String> log = new ArrayList<>();
    int port = nextListeningPort(start(log, "-conf", "{\"host\":\"127.0.0.1\",\"port\":0}"));
    java.nio.ByteBuffer frames = java.nio.ByteBuffer.allocate(96 * (4 + 65536)).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    java.util.Random random = new java.util.Random(5);
    byte[] payload = new byte[65536];
    for (int i = 0; i < 96; i++) {
      random.nextBytes(payload);
      frames.putInt(payload.length).put(payload);
    }
    byte[] sent = frames.array();
    java.util.concurrent.ExecutorService clients = java.util.concurrent.Executors.newFixedThreadPool(20);
    try {
      for (int round = 0; round < 3; round++) {
        List<java.util.concurrent.Future<byte[]>> echoes = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
          echoes.add(clients.submit(() -> {
            try (java.net.Socket socket = new java.net.Socket()) {
              socket.setSendBufferSize(8 << 20);
              socket.setReceiveBufferSize(16 * 1024);
              socket.setSoTimeout(30_000);
              socket.connect(new java.net.InetSocketAddress("127.0.0.1", port));
              socket.getOutputStream().write(sent);
              socket.shutdownOutput();
              Thread.sleep(2000); // the client is slow to read: part of the scenario, not a wait for the server
              return socket.getInputStream().readAllBytes();
            }
          }));
        }
        for (java.util.concurrent.Future<byte[]> echo : echoes) {
          byte[] got = echo.get(60, TimeUnit.SECONDS);
          assertEquals(sent.length, got.length, "round " + round + ": every response, then the end of stream");
          assertTrue(java.util.Arrays.equals(sent, got), "round " + round + ": byte-exact");
        }
      }
    } finally {
      clients.shutdownNow();
    }
  }

  @Test
  void configFileIsRead() throws Exception {
    Path conf = Files.createTempFile("frame-echo", ".json");
    try {
      Files.writeString(conf, "{\"host\":\"127.0.0.1\",\"port\":0,\"writeQueueMaxSize\":4096}");
      String line = nextStartupLine(start(new ArrayList<>(), "-conf", conf.toString()));
      assertTrue(line.contains("writeQueueMaxSize=4096,"), line);
    } finally {
      Files.deleteIfExists(conf);
    }
  }

  @Test
  void instancesShareOnePort() throws Exception {
    BlockingQueue<String> lines = start(new ArrayList<>(), "-instances", "2", "-conf", "{\"host\":\"127.0.0.1\",\"port\":-1}");
    int first = nextListeningPort(lines);
    int second = nextListeningPort(lines);
    assertEquals(first, second);
    assertEquals("len:2 data:hi\n", runClient(first, "hi").replace("\r", ""));
  }

  private static String nextStartupLine(BlockingQueue<String> lines) throws InterruptedException {
    String line;
    do {
      line = lines.poll(30, TimeUnit.SECONDS);
      assertNotNull(line);
      assertNotEquals("<eof>", line);
    } while (!line.contains("frame-echo listening"));
    return line;
  }

  @Test
  void environmentOverridesTheFileAndInlineConfigOverridesTheEnvironment() throws Exception {
    Path conf = Files.createTempFile("frame-echo", ".json");
    try {
      Files.writeString(conf, "{\"host\":\"127.0.0.1\",\"port\":0,\"writeQueueMaxSize\":4096}");
      java.util.Map<String, String> env = java.util.Map.of("FRAME_ECHO_WRITE_QUEUE_MAX_SIZE", "8192");
      assertTrue(nextStartupLine(start(env, new ArrayList<>(), "-conf", conf.toString())).contains("writeQueueMaxSize=8192,"));
      assertTrue(nextStartupLine(start(env, new ArrayList<>(), "-conf", "{\"host\":\"127.0.0.1\",\"port\":0,\"writeQueueMaxSize\":2048}"))
        .contains("writeQueueMaxSize=2048,"));
    } finally {
      Files.deleteIfExists(conf);
    }
  }

  /** Started under a descriptor limit below what maxConnections needs, the server says so at start. */
  @Test
  void aDescriptorLimitBelowMaxConnectionsIsAWarningAtStart() throws Exception {
    List<String> log = new ArrayList<>();
    String conf = "{\"host\":\"127.0.0.1\",\"port\":0,\"maxConnections\":2000}";
    // The shell lowers its own limit, then becomes the JVM, which inherits it.
    BlockingQueue<String> lines = start(List.of("/bin/sh", "-c", "ulimit -n 1024 && exec \"$0\" -jar \"$1\" -conf \"$2\"",
      javaBin(), JAR.toString(), conf), java.util.Map.of(), log);
    nextListeningPort(lines);
    String line = null;
    for (String l = lines.poll(10, TimeUnit.SECONDS); l != null && !l.equals("<eof>"); l = lines.poll(2, TimeUnit.SECONDS)) {
      if (l.contains("WARN") && l.contains("file descriptors")) {
        line = l;
        break;
      }
    }
    assertNotNull(line, "no WARN about the descriptor limit: " + log);
    assertTrue(line.contains("1024") && line.contains("2000"), line);
  }

  @Test
  void metricsFromTheEnvironmentIncludeVertxOwnMeters() throws Exception {
    int metricsPort;
    try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      metricsPort = probe.getLocalPort();
    }
    java.util.Map<String, String> env = java.util.Map.of("FRAME_ECHO_METRICS_ENABLED", "true",
      "FRAME_ECHO_METRICS_HOST", "127.0.0.1", "FRAME_ECHO_METRICS_PORT", String.valueOf(metricsPort));
    int port = nextListeningPort(start(env, new ArrayList<>(), "-conf", "{\"host\":\"127.0.0.1\",\"port\":0}"));
    runClient(port, "counted");
    java.net.http.HttpResponse<String> response = java.net.http.HttpClient.newHttpClient().send(
      java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + metricsPort + "/metrics")).build(),
      java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(200, response.statusCode());
    assertTrue(response.body().contains("frame_echo_requests_total{server=\"0\"} 1.0"), response.body());
    assertTrue(response.body().contains("vertx_net_server_bytes_read_total"), "Vert.x's own TCP meters");
    assertTrue(response.body().contains("jvm_memory_used_bytes"), "JVM meters");
  }

  /** Waits (bounded) for a line containing {@code text}; fails if the process ends first. */
  private static String awaitLine(BlockingQueue<String> lines, String text) throws InterruptedException {
    while (true) {
      String line = lines.poll(30, TimeUnit.SECONDS);
      assertNotNull(line, "no line with '" + text + "' within 30 s");
      assertNotEquals("<eof>", line, "the server exited before saying '" + text + "'");
      if (line.contains(text)) {
        return line;
      }
    }
  }

  private static int tlsClient(int port, String trusted) throws Exception {
    Process p = new ProcessBuilder(javaBin(), "-jar", JAR.toString(), "client", "--port", String.valueOf(port), "--tls",
      "--trust", trusted, "--no-verify-host", "hello").redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    assertTrue(p.waitFor(30, TimeUnit.SECONDS), "client did not finish");
    return p.exitValue();
  }

  /** Whether this JVM was started with SIGHUP ignored (its children inherit that). */
  private static boolean sighupIgnoredHere() throws IOException {
    Path status = Path.of("/proc/self/status");
    if (!Files.isReadable(status)) {
      return false;
    }
    String ignored = Files.readAllLines(status).stream().filter(line -> line.startsWith("SigIgn:")).findFirst().orElse("SigIgn: 0");
    return (Long.parseLong(ignored.substring("SigIgn:".length()).trim(), 16) & 1) != 0;
  }

  private static void hangUp(Process p) throws Exception {
    assertEquals(0, new ProcessBuilder("kill", "-HUP", String.valueOf(p.pid())).start().waitFor());
  }

  /**
   * SIGHUP re-reads the TLS files: one INFO line, and new connections get the new certificate; when the files do not
   * load, one ERROR line with the reason, and the server keeps serving the certificate it had. It never stops.
   */
  @Test
  void sighupReloadsTheTlsFilesAndNeverStopsTheServer() throws Exception {
    io.vertx.core.net.SelfSignedCertificate first = io.vertx.core.net.SelfSignedCertificate.create("localhost");
    io.vertx.core.net.SelfSignedCertificate second = io.vertx.core.net.SelfSignedCertificate.create("localhost");
    Path dir = Files.createTempDirectory("frame-echo-sighup");
    Path cert = dir.resolve("server.pem");
    Path key = dir.resolve("server-key.pem");
    try {
      Files.copy(Path.of(first.certificatePath()), cert);
      Files.copy(Path.of(first.privateKeyPath()), key);
      List<String> log = new ArrayList<>();
      String conf = new io.vertx.core.json.JsonObject().put("host", "127.0.0.1").put("port", 0)
        .put("tls", new io.vertx.core.json.JsonObject().put("certPath", cert.toString()).put("keyPath", key.toString())).encode();
      // A build run under nohup (or a CI runner that ignores SIGHUP) passes the ignored SIGHUP on to the server, which
      // then cannot take it over (underNohupSighupStaysIgnoredAndTheStartSaysSo): the server gets SIGHUP's default.
      BlockingQueue<String> lines = sighupIgnoredHere()
        ? start(List.of("env", "--default-signal=HUP", javaBin(), "-jar", JAR.toString(), "-conf", conf), java.util.Map.of(), log)
        : start(log, "-conf", conf);
      int port = nextListeningPort(lines);
      Process server = processes.get(0);

      Files.copy(Path.of(second.certificatePath()), cert, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      Files.copy(Path.of(second.privateKeyPath()), key, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      hangUp(server);
      assertTrue(awaitLine(lines, "SIGHUP").contains("INFO"), String.join("\n", log));
      assertEquals(0, tlsClient(port, second.certificatePath()), "a new connection gets the new certificate");
      assertEquals(1, tlsClient(port, first.certificatePath()), "the old certificate is no longer served");

      Files.writeString(key, "not a key\n");
      hangUp(server);
      String error = awaitLine(lines, "SIGHUP");
      assertTrue(error.contains("ERROR") && error.contains("the previous certificate stays in use"), error);
      assertEquals(0, tlsClient(port, second.certificatePath()), "still served with the certificate it had");
      assertTrue(server.isAlive(), "SIGHUP stopped the server");
    } finally {
      first.delete();
      second.delete();
      try (var files = Files.list(dir)) {
        for (Path file : files.toList()) {
          Files.delete(file);
        }
      }
      Files.delete(dir);
    }
  }

  /**
   * Started under nohup (SIGHUP ignored, inherited), the JVM will not take SIGHUP over: the reload cannot run. With TLS
   * on, one WARN line at start says so; a SIGHUP then changes nothing and the server serves on.
   */
  @Test
  void underNohupSighupStaysIgnoredAndTheStartSaysSo() throws Exception {
    io.vertx.core.net.SelfSignedCertificate certificate = io.vertx.core.net.SelfSignedCertificate.create("localhost");
    try {
      List<String> log = new ArrayList<>();
      String conf = new io.vertx.core.json.JsonObject().put("host", "127.0.0.1").put("port", 0)
        .put("tls", new io.vertx.core.json.JsonObject().put("certPath", certificate.certificatePath())
          .put("keyPath", certificate.privateKeyPath())).encode();
      // What nohup does: SIGHUP ignored, then exec; the JVM inherits the disposition.
      BlockingQueue<String> lines = start(List.of("sh", "-c", "trap '' HUP; exec \"$0\" -jar \"$1\" -conf \"$2\"",
        javaBin(), JAR.toString(), conf), java.util.Map.of(), log);
      String warning = awaitLine(lines, "SIGHUP");
      assertTrue(warning.contains("WARN") && warning.contains("TLS files are not reloaded"), String.join("\n", log));
      int port = nextListeningPort(lines);
      Process server = processes.get(0);
      String ignored = Files.readAllLines(Path.of("/proc", String.valueOf(server.pid()), "status")).stream()
        .filter(line -> line.startsWith("SigIgn:")).findFirst().orElseThrow();
      assertEquals(1, Long.parseLong(ignored.substring("SigIgn:".length()).trim(), 16) & 1, "SIGHUP (1) is ignored: " + ignored);
      hangUp(server);
      assertEquals(0, tlsClient(port, certificate.certificatePath()), "still serving");
      assertTrue(server.isAlive(), "SIGHUP stopped the server");
    } finally {
      certificate.delete();
    }
  }

  @Test
  void badEnvironmentVariableStopsTheLauncher() throws Exception {
    List<String> log = new ArrayList<>();
    BlockingQueue<String> lines = start(java.util.Map.of("FRAME_ECHO_PORT", "http"), log);
    while (!"<eof>".equals(lines.poll(30, TimeUnit.SECONDS))) {
      // read to the end
    }
    Process p = processes.get(0);
    assertTrue(p.waitFor(20, TimeUnit.SECONDS));
    assertEquals(1, p.exitValue());
    assertTrue(String.join("\n", log).contains("FRAME_ECHO_PORT: \"http\" is not an integer"), String.join("\n", log));
  }

  /** What a finished run of the jar printed, and its exit status. */
  private record Finished(int status, String out, List<String> errLines) {
    String err() {
      return String.join("\n", errLines);
    }
  }

  /** Runs the jar to its end (bounded), its output in files so that neither stream can fill up and block it. */
  private static Finished runToEnd(java.util.Map<String, String> env, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(javaBin(), "-jar", JAR.toString()));
    command.addAll(List.of(args));
    Path out = Files.createTempFile("frame-echo-out", ".txt");
    Path err = Files.createTempFile("frame-echo-err", ".txt");
    try {
      ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
      builder.environment().keySet().removeIf(name -> name.startsWith("FRAME_ECHO_"));
      builder.environment().putAll(env);
      Process p = builder.start();
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError("the jar did not exit within 60 s: " + command);
      }
      List<String> errLines = Files.readAllLines(err).stream().filter(line -> !line.isBlank()).toList();
      return new Finished(p.exitValue(), Files.readString(out), errLines);
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }

  private static Finished runToEnd(String... args) throws Exception {
    return runToEnd(java.util.Map.of(), args);
  }

  /** A mistake ends with exactly one line on stderr, starting with frame-echo and containing {@code expected}, and no stack trace. */
  private static void assertOneLine(Finished run, int status, String expected) {
    assertEquals(status, run.status(), run.err());
    assertEquals(1, run.errLines().size(), "exactly one line:\n" + run.err());
    assertTrue(run.errLines().get(0).startsWith("frame-echo"), run.err());
    assertTrue(run.errLines().get(0).contains(expected), run.err());
  }

  @Test
  void badConfigurationIsOneLineNamingTheKeyAndExitsWith1() throws Exception {
    assertOneLine(runToEnd("-conf", "{\"port\":70000}"), 1, "frame-echo: invalid configuration: port: 70000 is out of range");
    assertOneLine(runToEnd("-conf", "{\"port\":\"abc\"}"), 1, "port: expected an integer but got the string \"abc\"");
    assertOneLine(runToEnd("-conf", "conf/nonexistent.json"), 1, "-conf conf/nonexistent.json: the file does not exist");
    assertOneLine(runToEnd(java.util.Map.of("FRAME_ECHO_PORT", "http")), 1, "FRAME_ECHO_PORT: \"http\" is not an integer");
  }

  @Test
  void debugSwitchAddsTheStackTrace() throws Exception {
    Finished run = runToEnd(java.util.Map.of("FRAME_ECHO_DEBUG", "1"), "-conf", "{\"port\":70000}");
    assertEquals(1, run.status());
    assertTrue(run.err().contains("port: 70000 is out of range") && run.err().contains("\tat io.frameecho."), run.err());
  }

  @Test
  void portInUseIsOneLineNamingTheAddressAndExitsWith15() throws Exception {
    try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      int port = taken.getLocalPort();
      assertOneLine(runToEnd("-conf", "{\"host\":\"127.0.0.1\",\"port\":" + port + "}"), 15,
        "frame-echo: could not start: cannot listen on 127.0.0.1:" + port + ": Address already in use");
    }
  }

  @Test
  void badLoggingVariablesAreRefusedWithTheAllowedValues() throws Exception {
    assertOneLine(runToEnd(java.util.Map.of("FRAME_ECHO_LOG_FORMAT", "xml")), 1,
      "frame-echo: FRAME_ECHO_LOG_FORMAT: \"xml\" is not a log format; use one of text, json");
    assertOneLine(runToEnd(java.util.Map.of("FRAME_ECHO_LOG_LEVEL", "VERBOSE"), "client", "x"), 1,
      "frame-echo: FRAME_ECHO_LOG_LEVEL: \"VERBOSE\" is not a level; use one of TRACE, DEBUG, INFO, WARN, ERROR, OFF");
  }

  @Test
  void logFormatIgnoresCaseAndLogsJson() throws Exception {
    String line = nextStartupLine(start(java.util.Map.of("FRAME_ECHO_LOG_FORMAT", "JSON"), new ArrayList<>(),
      "-conf", "{\"host\":\"127.0.0.1\",\"port\":0}"));
    assertTrue(line.startsWith("{") && line.contains("\"level\":\"INFO\""), line);
  }

  @Test
  void mistypedSubcommandIsOneLineAndExitsWith2() throws Exception {
    assertOneLine(runToEnd("clinet"), 2, "frame-echo: unknown subcommand 'clinet' (did you mean 'client'?)");
    assertOneLine(runToEnd("io.frameecho.NoSuchVerticle"), 2, "no verticle class io.frameecho.NoSuchVerticle");
    assertOneLine(runToEnd("-conff", "x.json"), 2, "frame-echo: unknown option '-conff' (did you mean '-conf'?)");
    assertOneLine(runToEnd("bench", "--duration", "3", "--warmup", "3"), 2, "frame-echo bench: --warmup (3.0 s) must be shorter");
  }

  @Test
  void versionOnTheJarAndEachSubcommand() throws Exception {
    for (String[] args : new String[][] {{"--version"}, {"-V"}, {"client", "-V"}, {"bench", "--version"}}) {
      Finished run = runToEnd(args);
      assertEquals(0, run.status(), run.err());
      String[] lines = run.out().split("\n");
      assertTrue(lines[0].matches("frame-echo \\d+\\.\\d+\\.\\d+.*"), run.out());
      assertTrue(lines[1].matches("Vert\\.x 5\\.\\d+\\.\\d+.*"), run.out());
      assertTrue(lines[2].startsWith("Java "), run.out());
    }
  }

  @Test
  void helpIsFrameEchosOwnFirst() throws Exception {
    for (String arg : new String[] {"-h", "--help", "help"}) {
      Finished run = runToEnd(arg);
      assertEquals(0, run.status(), run.err());
      assertTrue(run.out().startsWith("frame-echo "), run.out());
      for (String expected : new String[] {"client", "bench", "check-config", "-conf", "-instances", "FRAME_ECHO_PORT",
          "FRAME_ECHO_LOG_LEVEL", "FRAME_ECHO_DEBUG", "port 1234", "--launcher-help", "Exit status"}) {
        assertTrue(run.out().contains(expected), expected + " in\n" + run.out());
      }
      assertFalse(run.out().contains("\u001b["), "no ANSI escapes");
    }
  }

  @Test
  void checkConfigValidatesWithoutBinding() throws Exception {
    Finished ok = runToEnd("check-config", "-conf", "conf/config.json");
    assertEquals(0, ok.status(), ok.err());
    assertTrue(ok.out().contains("configuration is valid: frame port 0.0.0.0:1234 (all interfaces), keep-alive 300s, metrics off"), ok.out());
    Finished fromEnv = runToEnd(java.util.Map.of("FRAME_ECHO_METRICS_ENABLED", "true"), "check-config");
    assertTrue(fromEnv.out().contains("metrics on http://127.0.0.1:9464/metrics"), fromEnv.out());
    assertOneLine(runToEnd("check-config", "-conf", "{\"handler\":{\"type\":\"nope\"}}"), 1, "handler.type");
    assertOneLine(runToEnd("check-config", "-conf", "{\"tls\":{\"certPath\":\"no.pem\",\"keyPath\":\"no-key.pem\"}}"), 1,
      "tls.certPath: no.pem does not exist");
  }

  @Test
  void startupLinesSayWhereTheServerAndMetricsListen() throws Exception {
    List<String> log = new ArrayList<>();
    BlockingQueue<String> lines = start(java.util.Map.of("FRAME_ECHO_METRICS_ENABLED", "true", "FRAME_ECHO_METRICS_PORT", "0"), log,
      "-conf", "{\"host\":\"127.0.0.1\",\"port\":0}");
    assertFalse(nextStartupLine(lines).contains("(all interfaces)"), "127.0.0.1 is one interface");
    String metrics;
    do {
      metrics = lines.poll(30, TimeUnit.SECONDS);
      assertNotNull(metrics, "no metrics line within 30 s");
      assertNotEquals("<eof>", metrics);
    } while (!metrics.contains("frame-echo metrics on"));
    assertTrue(metrics.matches(".*frame-echo metrics on http://127\\.0\\.0\\.1:\\d+/metrics, health on /health/live and /health/ready"), metrics);
  }

  /**
   * From the operator's trial, with conf/hardened.json's settings (metrics on, a drain delay): on SIGTERM the port
   * closed and every connection ended at once, the drain delay ignored. The server listened from the metrics
   * endpoint's own event loop, so its NetServer belonged to no deployment and Vert.x closed it with itself. Once
   * readiness says 503 (the stop has begun), a new client is still answered throughout drainDelayMs.
   */
  @Test
  void withMetricsOnTheDrainDelayStillServesNewClients() throws Exception {
    List<String> log = new ArrayList<>();
    BlockingQueue<String> lines = start(log, "-conf",
      "{\"host\":\"127.0.0.1\",\"port\":0,\"drainDelayMs\":15000,\"metrics\":{\"enabled\":true,\"port\":0}}");
    int metricsPort = -1;
    int port = -1;
    while (port < 0 || metricsPort < 0) {
      String line = lines.poll(30, TimeUnit.SECONDS);
      assertNotNull(line, "no start-up line within 30 s");
      assertNotEquals("<eof>", line, "the server exited during start-up");
      Matcher metrics = Pattern.compile("frame-echo metrics on http://127\\.0\\.0\\.1:(\\d+)/").matcher(line);
      if (metrics.find()) {
        metricsPort = Integer.parseInt(metrics.group(1));
      }
      Matcher listening = LISTENING.matcher(line);
      if (listening.find()) {
        port = Integer.parseInt(listening.group(1));
      }
    }
    Process server = processes.get(processes.size() - 1);
    assertEquals(0, new ProcessBuilder("kill", "-TERM", String.valueOf(server.pid())).start().waitFor());
    java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
    java.net.http.HttpRequest ready = java.net.http.HttpRequest.newBuilder(
      java.net.URI.create("http://127.0.0.1:" + metricsPort + "/health/ready")).timeout(java.time.Duration.ofSeconds(5)).build();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (http.send(ready, java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode() != 503) {
      assertTrue(System.nanoTime() < deadline, "readiness never turned 503 after SIGTERM");
    }
    // A socket of this JVM, not a client process: on a busy machine a second JVM's start-up alone took most of the
    // drain delay, and the client found the port closed (exit status 1 in a helper's run).
    try (java.net.Socket client = new java.net.Socket("127.0.0.1", port)) {
      client.setSoTimeout(10_000);
      byte[] frame = io.frameecho.protocol.LengthField.DEFAULT.frame(io.vertx.core.buffer.Buffer.buffer("still")).getBytes();
      client.getOutputStream().write(frame);
      assertArrayEquals(frame, client.getInputStream().readNBytes(frame.length), "served during the drain delay");
    }
  }
}
