package io.frameecho.server.impl.shared;

import io.frameecho.server.Rejection;
import io.frameecho.testkit.LogCapture;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.stream.IntStream;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Limits made outside any deployment (the only way to make them without deploying a verticle): each attach
 * has limits of its own. Sharing within a deployment is the server tests' part.
 */
class ConnectionLimitsTest {

  /** The rejections these tests cause on purpose log WARN lines; captured, they stay off the console. */
  @RegisterExtension
  final LogCapture limitsLog = LogCapture.named("io.frameecho.server.impl.ConnectionLimits");

  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void closeVertx() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, SECONDS);
  }

  private ConnectionLimits limits(int maxConnections, int maxConnectionsPerIp) {
    return ConnectionLimits.attach(vertx, maxConnections, maxConnectionsPerIp, 1_000_000, 1000);
  }

  private static void acquireAll(ConnectionLimits limits, List<String> ips) {
    ips.forEach(ip -> assertNull(limits.tryAcquire(ip), ip));
  }

  @Test
  void oneConnectionTooManyIsTurnedAway() {
    ConnectionLimits limits = limits(2, 0);
    acquireAll(limits, List.of("10.0.0.1", "10.0.0.2"));
    assertEquals(Rejection.MAX_CONNECTIONS, limits.tryAcquire("10.0.0.3"));
    assertEquals(2, limits.openConnections());

    limits.release("10.0.0.1");
    assertNull(limits.tryAcquire("10.0.0.3"));
    limits.release("10.0.0.2");
    limits.release("10.0.0.3");
    assertEquals(0, limits.openConnections());
  }

  @Test
  void zeroMaxConnectionsIsUnlimitedButCounted() {
    ConnectionLimits limits = limits(0, 0);
    List<String> ips = IntStream.range(0, 1000).mapToObj(i -> "10.0." + i / 250 + "." + i % 250).toList();
    acquireAll(limits, ips);
    assertEquals(1000, limits.openConnections());
    ips.forEach(limits::release);
    assertEquals(0, limits.openConnections());
  }

  @Test
  void oneConnectionTooManyFromOneAddressIsTurnedAway() {
    ConnectionLimits limits = limits(0, 2);
    acquireAll(limits, List.of("10.0.0.1", "10.0.0.1", "10.0.0.2"));
    assertEquals(Rejection.MAX_CONNECTIONS_PER_IP, limits.tryAcquire("10.0.0.1"));
    assertEquals(3, limits.openConnections());

    limits.release("10.0.0.1");
    assertNull(limits.tryAcquire("10.0.0.1"));
    List.of("10.0.0.1", "10.0.0.1", "10.0.0.2").forEach(limits::release);
    assertEquals(0, limits.openConnections());
    acquireAll(limits, List.of("10.0.0.1", "10.0.0.1"));
  }

  @Test
  void aRejectedConnectionCountsNothing() {
    ConnectionLimits limits = limits(3, 1);
    acquireAll(limits, List.of("10.0.0.1"));
    assertEquals(Rejection.MAX_CONNECTIONS_PER_IP, limits.tryAcquire("10.0.0.1"));
    acquireAll(limits, List.of("10.0.0.2", "10.0.0.3"));
    assertEquals(Rejection.MAX_CONNECTIONS, limits.tryAcquire("10.0.0.4"));
    assertEquals(3, limits.openConnections());

    List.of("10.0.0.1", "10.0.0.2", "10.0.0.3").forEach(limits::release);
    assertEquals(0, limits.openConnections());
    acquireAll(limits, List.of("10.0.0.4"));
    assertEquals(Rejection.MAX_CONNECTIONS_PER_IP, limits.tryAcquire("10.0.0.4"));
  }

  @Test
  void outsideADeploymentEachAttachHasLimitsOfItsOwn() {
    ConnectionLimits one = limits(1, 0);
    ConnectionLimits other = limits(1, 0);
    assertNotSame(one, other);
    assertNotSame(one.budget(), other.budget());
    assertEquals(1_000_000, one.budget().limit());
    assertNull(one.tryAcquire("10.0.0.1"));
    assertNull(other.tryAcquire("10.0.0.1"), "the other's count is its own");

    one.detach(vertx);
    other.detach(vertx);
    assertTrue(vertx.sharedData().getLocalMap(ConnectionLimits.SHARED_MAP).isEmpty());
  }
}
