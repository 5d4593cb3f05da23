package io.frameecho.server.impl.netty;

import io.netty.channel.epoll.Epoll;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetSocket;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What start-up says of the internals: each lookup that fails names itself alone, what it turns off and why, in the one
 * line; nothing when every lookup is found, as on the Vert.x and Netty this build runs on.
 */
class InternalsTest {

  private static final VertxLine FOUND_LINE = new VertxLine(NetSocketInternal.class);
  private static final VertxLine LINE_WITHOUT_MESSAGE_HANDLER = new VertxLine(NetSocket.class);
  /** A Netty whose epoll channel lacks the interest-set method: one of EpollProbe's lookups fails. */
  private static final EpollProbe EPOLL_WITHOUT_SET_FLAG = new EpollProbe(name -> name.endsWith(".AbstractEpollChannel")
    ? Object.class : Class.forName(name, false, InternalsTest.class.getClassLoader()));
  private static final String CLUSTER_VIEW_OFF = ClusterView.lookUp(Vertx.class);
  private static final String LOOP_ACCEPTOR_OFF = "accepting on the server's own event loop is off (test)";

  /** The items of the line after its lead-in, in order. */
  private static List<String> items(String line) {
    String lead = "frame-echo runs without some of Netty's and Vert.x's internals, each lookup turning off only what it serves: ";
    assertTrue(line.startsWith(lead), line);
    assertEquals(1, line.lines().count(), "one line: " + line);
    return List.of(line.substring(lead.length()).split("; "));
  }

  @Test
  void onThisBuildEveryInternalIsFoundAndNothingIsSaidOff() {
    assertNull(Internals.whatIsOff(), "start-up's WARN line would name: " + Internals.whatIsOff());
    assertNull(ClusterView.OFF);
    assertNull(LoopAcceptor.off());
    assertNull(VertxLine.FOUND.off());
  }

  @Test
  void theVertxLinesLookupAloneTurnsOffReadingNettysBuffers() {
    List<String> off = items(Internals.whatIsOff(LINE_WITHOUT_MESSAGE_HANDLER, EpollProbe.FOUND, null, null));
    assertEquals(List.of(LINE_WITHOUT_MESSAGE_HANDLER.off()), off);
    assertTrue(off.get(0).startsWith("reads as Netty's buffers are off"), off.get(0));
  }

  @Test
  void theLoopAcceptorsLookupAloneTurnsOffAcceptingOnTheServersLoop() {
    assertEquals(List.of(LOOP_ACCEPTOR_OFF), items(Internals.whatIsOff(FOUND_LINE, EpollProbe.FOUND, null, LOOP_ACCEPTOR_OFF)));
  }

  @Test
  void theClusterManagersLookupAloneTurnsOffTheWatchForDepartedNodes() {
    List<String> off = items(Internals.whatIsOff(FOUND_LINE, EpollProbe.FOUND, CLUSTER_VIEW_OFF, null));
    assertEquals(List.of(CLUSTER_VIEW_OFF), off);
    assertTrue(off.get(0).startsWith("the watch for departed cluster nodes (handler.nodeLeftGraceMs) is off"), off.get(0));
  }

  @Test
  void anEpollLookupAloneTurnsOffWhatItServesOnEpollOnly() {
    List<String> off = items(Internals.whatIsOff(FOUND_LINE, EPOLL_WITHOUT_SET_FLAG, null, null));
    assertEquals(EPOLL_WITHOUT_SET_FLAG.off().size(), off.size(), off.toString());
    assertEquals("on epoll, " + EPOLL_WITHOUT_SET_FLAG.off().get(0), off.get(0));
  }

  @Test
  void everyLookupThatFailsHasItsOwnItemInTheOneLine() {
    List<String> off = items(Internals.whatIsOff(LINE_WITHOUT_MESSAGE_HANDLER, EPOLL_WITHOUT_SET_FLAG, CLUSTER_VIEW_OFF,
      LOOP_ACCEPTOR_OFF));
    assertEquals(List.of(LINE_WITHOUT_MESSAGE_HANDLER.off(), LOOP_ACCEPTOR_OFF, CLUSTER_VIEW_OFF,
      "on epoll, " + EPOLL_WITHOUT_SET_FLAG.off().get(0)), off);
  }

  @Test
  void theDescriptionNamesTheVertxVersionAndHowReadsReachAConnection() {
    String version = Internals.vertxVersion();
    assertTrue(version.matches("5\\.\\d+\\.\\d+.*"), version);
    String description = Internals.description();
    assertTrue(description.startsWith("Vert.x " + version + ": reads Netty's buffers through "), description);
    assertEquals(1, description.lines().count());
  }

  @Test
  void theProxyCodecIsFoundWhereItIsOnTheClassPath() {
    assertTrue(Internals.proxyCodecPresent(), "netty-codec-haproxy is a test dependency");
  }

  @Test
  void theTransportIsNamedAsOperatorsKnowIt() throws Exception {
    Vertx nio = Vertx.vertx();
    try {
      assertEquals("nio", Internals.transportName(nio));
    } finally {
      nio.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
    assumeTrue(Epoll.isAvailable(), "epoll is not available here");
    Vertx epoll = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));
    try {
      assertEquals("epoll", Internals.transportName(epoll));
    } finally {
      epoll.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }
}
