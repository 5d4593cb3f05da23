package io.frameecho.server;

import io.frameecho.protocol.LengthField;
import io.frameecho.testkit.OneEventLoop;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.transport.Transport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.DataInputStream;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Every socket the server accepts probes after {@code keepAliveSeconds}, however many arrive at once when it starts: on
 * epoll the listener carries the times (Linux copies them to each socket made from it), and the sockets made before it
 * had them are given theirs one by one. Read in the kernel's own account of the sockets ({@code /proc/net/tcp}: the
 * keep-alive timer and when it fires).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class KeepAliveTest {

  private static final byte[] HELLO = LengthField.DEFAULT.frame(Buffer.buffer("hello")).getBytes();
  /** {@code /proc/net/tcp} counts timers in clock ticks (USER_HZ). */
  private static final int TICKS_PER_SECOND = 100;

  @Test
  void everyAcceptedSocketHasTheKeepAliveTimesFromTheFirstOn() throws Exception {
    assumeTrue(Transport.EPOLL.available(), "the listener gives the times on epoll");
    assumeTrue(Files.isReadable(Path.of("/proc/net/tcp6")), "the kernel's socket tables are read from /proc");
    Vertx vertx = OneEventLoop.vertx();
    List<Socket> clients = new ArrayList<>();
    try {
      FrameEchoVerticle verticle = new FrameEchoVerticle();
      JsonObject config = new JsonObject().put("host", "127.0.0.1").put("port", 0).put("keepAliveSeconds", 120);
      vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(config)).toCompletionStage().toCompletableFuture()
        .get(10, TimeUnit.SECONDS);
      int port = verticle.actualPort();
      // A burst at start, before the listener has the times: made before it, queued or accepted when it gets them.
      for (int i = 0; i < 40; i++) {
        clients.add(new Socket("127.0.0.1", port));
      }
      echoed(clients);
      // Then sockets made after it had them.
      List<Socket> later = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        later.add(new Socket("127.0.0.1", port));
      }
      echoed(later);
      clients.addAll(later);
      // The tables are the whole machine's, and are read in pieces while they change: count only the server's end of
      // each of these clients' connections (local port the server's, remote port the client's), re-reading if one is missing.
      java.util.Map<String, String[]> byClient = new java.util.HashMap<>();
      for (Socket client : clients) {
        byClient.put(String.format(":%04X", client.getLocalPort()), null);
      }
      String local = String.format(":%04X", port);
      for (int read = 0; read < 5 && byClient.containsValue(null); read++) {
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
          for (String line : Files.readAllLines(Path.of(table))) {
            String[] f = line.trim().split("\\s+");
            // An established socket of the server (its local port is the server's) to one of these clients.
            if (f[1].endsWith(local) && f[3].equals("01") && byClient.containsKey(f[2].substring(f[2].lastIndexOf(':')))) {
              byClient.put(f[2].substring(f[2].lastIndexOf(':')), f);
            }
          }
        }
      }
      List<String[]> served = byClient.values().stream().filter(java.util.Objects::nonNull).toList();
      assertEquals(clients.size(), served.size(), "the server's end of each connection");
      for (String[] f : served) {
        String[] timer = f[5].split(":");
        long firesInTicks = Long.parseLong(timer[1], 16);
        assertEquals("02", timer[0], "the keep-alive timer runs on " + String.join(" ", f));
        assertTrue(firesInTicks <= 120 * TICKS_PER_SECOND && firesInTicks > 60 * TICKS_PER_SECOND,
          "fires within keepAliveSeconds (not the kernel's 7200 s): " + firesInTicks + " ticks on " + String.join(" ", f));
      }
    } finally {
      for (Socket client : clients) {
        client.close();
      }
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  /** Each client is served: a frame sent is echoed. */
  private static void echoed(List<Socket> clients) throws Exception {
    for (Socket client : clients) {
      client.setSoTimeout(10_000);
      client.getOutputStream().write(HELLO);
    }
    for (Socket client : clients) {
      byte[] echo = new byte[HELLO.length];
      new DataInputStream(client.getInputStream()).readFully(echo);
      assertArrayEquals(HELLO, echo);
    }
  }
}
