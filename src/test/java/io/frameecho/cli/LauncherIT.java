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

import static org.junit.jupiter.api.Assertions.assertEquals;
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
    assertTrue(response.body().contains("frame_echo_requests_total 1.0"), response.body());
    assertTrue(response.body().contains("vertx_net_server_bytes_read_total"), "Vert.x's own TCP meters");
    assertTrue(response.body().contains("jvm_memory_used_bytes"), "JVM meters");
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

  @Test
  void badConfigurationStopsTheLauncherWithTheKeyAndReason() throws Exception {
    List<String> log = new ArrayList<>();
    BlockingQueue<String> lines = start(log, "-conf", "{\"port\":70000}");
    String line;
    do {
      line = lines.poll(30, TimeUnit.SECONDS);
      assertNotNull(line, "the launcher neither failed nor exited");
    } while (!line.equals("<eof>"));
    Process p = processes.get(0);
    assertTrue(p.waitFor(20, TimeUnit.SECONDS));
    assertNotEquals(0, p.exitValue());
    assertTrue(String.join("\n", log).contains("port: 70000 is out of range"), String.join("\n", log));
  }
}
