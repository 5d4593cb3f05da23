package io.frameecho.server;

import io.frameecho.client.FrameClient;
import io.frameecho.client.FrameClientException;
import io.frameecho.testkit.LogCapture;
import io.frameecho.testkit.RecordingMetrics;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.SocketAddress;
import io.vertx.core.transport.Transport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** A server on a unix domain socket, on each transport that can: echo, a stale socket file, per-address limits. */
@org.junit.jupiter.api.Timeout(value = 60, unit = TimeUnit.SECONDS)
class UnixSocketTest {

  /** The per-address rejection and the stale socket file these tests cause on purpose log WARN lines; captured. */
  @RegisterExtension
  final LogCapture limitsLog = LogCapture.named("io.frameecho.server.impl.ConnectionLimits");
  @RegisterExtension
  final LogCapture serverLog = LogCapture.named(FrameEchoServer.class.getName());

  /** Short: a socket path has at most 107 bytes, and a build directory can be deep. */
  @TempDir
  Path dir;

  private Vertx vertx;

  private Vertx vertx(String transport) {
    Transport chosen = transport.equals("epoll") ? Transport.EPOLL : Transport.NIO;
    assumeTrue(chosen.available(), () -> transport + " is not available here");
    vertx = Vertx.builder().withTransport(chosen).build();
    return vertx;
  }

  @AfterEach
  void closeVertx() throws Exception {
    if (vertx != null) {
      await(vertx.close());
    }
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }

  private Path socketPath() {
    Path path = dir.resolve("fe.sock");
    assumeTrue(path.toString().getBytes().length <= FrameEchoOptions.MAX_UNIX_SOCKET_PATH_BYTES, "temp directory too deep");
    return path;
  }

  private static FrameClient connect(Vertx vertx, Path path) throws Exception {
    return await(FrameClient.connect(vertx, new NetClientOptions(), SocketAddress.domainSocketAddress(path.toString()), 1 << 20));
  }

  /** Epoll, and NIO too: Vert.x 5 listens on a domain socket with the JDK's own (16 and later). */
  @ParameterizedTest
  @ValueSource(strings = {"epoll", "nio"})
  void echoesOverAUnixSocketAndRemovesItsFileOnClose(String transport) throws Exception {
    Vertx vertx = vertx(transport);
    Path path = socketPath();
    FrameEchoServer server = await(FrameEchoServer.create(vertx, new FrameEchoOptions().setUnixSocket(path.toString())).listen());
    assertTrue(Files.exists(path), "the socket file is there while the server listens");
    FrameClient client = connect(vertx, path);
    assertEquals(Buffer.buffer("hello over " + transport), await(client.request(Buffer.buffer("hello over " + transport))));
    await(client.close());
    await(server.close());
    assertFalse(Files.exists(path), "closing the server removed its socket file");
  }

  @ParameterizedTest
  @ValueSource(strings = {"epoll", "nio"})
  void aStaleSocketFileIsRemovedAndTheServerListens(String transport) throws Exception {
    Vertx vertx = vertx(transport);
    Path path = socketPath();
    // What a process that died leaves: the socket file, with nothing listening on it (the JDK does not remove it).
    try (ServerSocketChannel dead = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      dead.bind(UnixDomainSocketAddress.of(path));
    }
    assertTrue(Files.exists(path));
    FrameEchoServer server = await(FrameEchoServer.create(vertx, new FrameEchoOptions().setUnixSocket(path.toString())).listen());
    FrameClient client = connect(vertx, path);
    assertEquals(Buffer.buffer("after"), await(client.request(Buffer.buffer("after"))));
    await(client.close());
    await(server.close());
  }

  @Test
  void aSocketSomeoneListensOnIsLeftAlone() throws Exception {
    Vertx vertx = vertx("epoll");
    Path path = socketPath();
    try (ServerSocketChannel live = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      live.bind(UnixDomainSocketAddress.of(path));
      Throwable failure = listenFailure(vertx, path);
      assertEquals("unixSocket " + path + ": another process is listening on this socket", failure.getMessage());
      assertTrue(Files.exists(path), "the other process's socket is still there");
    }
  }

  @Test
  void aFileThatIsNotASocketIsLeftAlone() throws Exception {
    Vertx vertx = vertx("epoll");
    Path path = socketPath();
    Files.writeString(path, "precious");
    Throwable failure = listenFailure(vertx, path);
    assertEquals("unixSocket " + path + " exists and is not a socket: frame-echo removes only a stale socket file, not this",
      failure.getMessage());
    assertEquals("precious", Files.readString(path));
  }

  private static Throwable listenFailure(Vertx vertx, Path path) {
    ExecutionException e = assertThrows(ExecutionException.class,
      () -> await(FrameEchoServer.create(vertx, new FrameEchoOptions().setUnixSocket(path.toString())).listen()));
    return e.getCause();
  }

  /**
   * Two instances of one deployment share one listener on the path (as Vert.x shares it): the second does not take
   * the first one's socket for another process's. Undeploying removes the file; a new deployment listens again.
   */
  @Test
  void theInstancesOfADeploymentShareTheSocket() throws Exception {
    Vertx vertx = vertx("epoll");
    Path path = socketPath();
    io.vertx.core.DeploymentOptions twoInstances = new io.vertx.core.DeploymentOptions().setInstances(2)
      .setConfig(new JsonObject().put("unixSocket", path.toString()));
    String deployment = await(vertx.deployVerticle(() -> new FrameEchoVerticle(), twoInstances));
    FrameClient client = connect(vertx, path);
    assertEquals(Buffer.buffer("shared"), await(client.request(Buffer.buffer("shared"))));
    await(client.close());
    await(vertx.undeploy(deployment));
    assertFalse(Files.exists(path), "undeploying removed the socket file");
    await(vertx.undeploy(await(vertx.deployVerticle(() -> new FrameEchoVerticle(), twoInstances))));
  }

  /** A unix-socket peer has no IP address: all of them count as one address, {@code unix}, for maxConnectionsPerIp. */
  @Test
  void unixPeersShareOneAddressForThePerAddressLimit() throws Exception {
    Vertx vertx = vertx("epoll");
    Path path = socketPath();
    RecordingMetrics events = new RecordingMetrics();
    FrameEchoServer server = await(FrameEchoServer.create(vertx,
      new FrameEchoOptions().setUnixSocket(path.toString()).setMaxConnectionsPerIp(1)).metrics(events).listen());
    FrameClient first = connect(vertx, path);
    assertEquals(Buffer.buffer("one"), await(first.request(Buffer.buffer("one"))));
    FrameClient second = connect(vertx, path);
    ExecutionException refused = assertThrows(ExecutionException.class, () -> await(second.request(Buffer.buffer("two"))));
    assertInstanceOf(FrameClientException.class, refused.getCause());
    assertTrue(refused.getCause().getMessage().startsWith("refused"), refused.getCause().getMessage());
    await(events.rejected(Rejection.MAX_CONNECTIONS_PER_IP, 1));
    assertEquals(Buffer.buffer("still"), await(first.request(Buffer.buffer("still"))));
    await(first.close());
    await(second.close());
    await(server.close());
  }

  @Test
  void aUnixSocketWithAHostOrPortIsRefusedNamingTheKey() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
      () -> new FrameEchoOptions(new JsonObject().put("unixSocket", "/run/fe.sock").put("port", 5555)));
    assertTrue(e.getMessage().startsWith("unixSocket: a server listens on a unix socket or on host and port, not both"), e.getMessage());
    new FrameEchoOptions(new JsonObject().put("unixSocket", "/run/fe.sock").put("port", FrameEchoOptions.DEFAULT_PORT));
  }

  @Test
  void aPathTooLongForTheKernelIsRefused() {
    String path = "/" + "d".repeat(FrameEchoOptions.MAX_UNIX_SOCKET_PATH_BYTES);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new FrameEchoOptions().setUnixSocket(path));
    assertEquals("unixSocket: \"" + path + "\" is 108 bytes long; a unix socket path has at most 107", e.getMessage());
  }
}
