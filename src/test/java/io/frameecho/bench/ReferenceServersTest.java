package io.frameecho.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetSocket;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.lang.reflect.Method;
import java.net.Socket;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The reference servers of {@code compare.sh} ({@code src/bench/*.java}, run by the source launcher) compile against
 * the libraries the runnable jar bundles, and each echoes frames byte-exact however they arrive.
 */
class ReferenceServersTest {

  private static final List<String> SOURCES = List.of("src/bench/RawNettyEcho.java", "src/bench/VertxNetEcho.java");

  @TempDir
  static Path classes;

  private static ClassLoader compiled;

  @BeforeAll
  static void compile() throws Exception {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
    String[] args = {"-d", classes.toString(), "-cp", libraries(), SOURCES.get(0), SOURCES.get(1)};
    int status = javac.run(null, diagnostics, diagnostics, args);
    assertEquals(0, status, diagnostics.toString(StandardCharsets.UTF_8));
    compiled = new URLClassLoader(new URL[] {classes.toUri().toURL()}, ReferenceServersTest.class.getClassLoader());
  }

  /** The jars of the libraries the two programs import (the test's class path may be a manifest-only jar). */
  private static String libraries() throws URISyntaxException {
    Set<String> jars = new LinkedHashSet<>();
    for (Class<?> c : List.of(io.netty.util.ReferenceCounted.class, ByteBuf.class, io.netty.channel.Channel.class,
      io.netty.handler.codec.ByteToMessageDecoder.class, io.netty.channel.epoll.Epoll.class,
      io.netty.channel.unix.Socket.class, io.vertx.core.Vertx.class)) {
      jars.add(Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
    }
    return String.join(File.pathSeparator, jars);
  }

  private static EmbeddedChannel rawNettyEcho() throws Exception {
    Class<?> echo = compiled.loadClass("RawNettyEcho$Echo");
    var constructor = echo.getDeclaredConstructor();
    constructor.setAccessible(true);
    return new EmbeddedChannel((ChannelHandler) constructor.newInstance());
  }

  private static byte[] frame(String payload) {
    byte[] bytes = payload.getBytes(StandardCharsets.UTF_8);
    return ByteBufUtil.getBytes(Unpooled.buffer().writeIntLE(bytes.length).writeBytes(bytes));
  }

  private static byte[] written(EmbeddedChannel channel) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (Object m = channel.readOutbound(); m != null; m = channel.readOutbound()) {
      ByteBuf b = (ByteBuf) m;
      out.writeBytes(ByteBufUtil.getBytes(b));
      b.release();
    }
    return out.toByteArray();
  }

  @Test
  void rawNettyEchoesWholeFramesByteExactHoweverTheyArrive() throws Exception {
    EmbeddedChannel channel = rawNettyEcho();
    byte[] hello = frame("hello");
    byte[] empty = frame("");
    byte[] both = new byte[hello.length + empty.length];
    System.arraycopy(hello, 0, both, 0, hello.length);
    System.arraycopy(empty, 0, both, hello.length, empty.length);
    // Byte by byte: nothing goes back until a frame is whole.
    for (int i = 0; i < hello.length - 1; i++) {
      channel.writeInbound(Unpooled.wrappedBuffer(both, i, 1));
      assertNull(channel.readOutbound(), "nothing before the frame is whole");
    }
    channel.writeInbound(Unpooled.wrappedBuffer(both, hello.length - 1, both.length - hello.length + 1));
    assertArrayEquals(both, written(channel));
    // Two frames in one read, then a header announcing over 32 MiB: the connection closes.
    channel.writeInbound(Unpooled.wrappedBuffer(both));
    assertArrayEquals(both, written(channel));
    channel.writeInbound(Unpooled.buffer().writeIntLE((32 << 20) + 1));
    assertFalse(channel.isOpen());
    channel.finishAndReleaseAll();
  }

  /** Vert.x's NetServer with the program's per-connection handler, on port 0: frames, an empty one included, echoed. */
  @Test
  void vertxNetEchoEchoesFramesByteExact() throws Exception {
    Method serve = compiled.loadClass("VertxNetEcho").getDeclaredMethod("serve", NetSocket.class);
    serve.setAccessible(true);
    Vertx vertx = Vertx.vertx();
    try {
      int port = vertx.createNetServer().connectHandler(socket -> {
          try {
            serve.invoke(null, socket);
          } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
          }
        }).listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS).actualPort();
      ByteArrayOutputStream sent = new ByteArrayOutputStream();
      sent.writeBytes(frame("hello"));
      sent.writeBytes(frame(""));
      sent.writeBytes(frame("x".repeat(70_000)));
      sent.writeBytes(frame(""));
      byte[] bytes = sent.toByteArray();
      try (Socket client = new Socket("127.0.0.1", port)) {
        client.setSoTimeout(10_000);
        // In two pieces, the second starting inside a header.
        client.getOutputStream().write(bytes, 0, 7);
        client.getOutputStream().flush();
        client.getOutputStream().write(bytes, 7, bytes.length - 7);
        assertArrayEquals(bytes, client.getInputStream().readNBytes(bytes.length));
      }
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }
}
