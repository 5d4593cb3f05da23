package io.frameecho.server.impl.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetSocket;

import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * Where the Vert.x lines differ, and Vert.x's internal view of a socket and of its transport.
 * <ul>
 *   <li><b>Reads as Netty buffers</b> ({@code messageHandler}): the public {@code handler(Buffer)} copies every read
 *   into a heap buffer; frames are sliced out of Netty's own buffer instead. Between Vert.x 5.0 and 5.1 this method
 *   moved to a new super-interface with another return type, so it is looked up once, by name; where it is missing,
 *   reads come through the public handler, copied, and {@link #off()} says so.</li>
 *   <li><b>{@code shutdownHandler}</b> takes a {@code Handler<Void>} in 5.0 and a {@code Handler<Duration>} from 5.1
 *   on: {@link #anyArgument}.</li>
 *   <li>{@code channelHandlerContext()} and {@code writeMessage} kept their form from 5.0 to 5.2.</li>
 * </ul>
 * Stateless once built: any thread; {@link #readNettyBuffers} on the socket's event loop.
 */
final class VertxLine {

  /** The Vert.x line on the class path. */
  static final VertxLine FOUND = new VertxLine(NetSocketInternal.class);

  /** {@code messageHandler(Handler)} as a {@code (NetSocketInternal, Handler)void}, or null where it is missing. */
  private final MethodHandle messageHandler;
  /** How reads reach a connection, for the start-up line. */
  private final String description;
  /** Why reads are copied, or null when they are not. */
  private final String off;

  /** Looks {@code messageHandler(Handler)} up on {@code socketType}, whatever it returns and whichever interface declares it. */
  VertxLine(Class<?> socketType) {
    MethodHandle handle = null;
    String description;
    String off = null;
    try {
      Method method = socketType.getMethod("messageHandler", Handler.class);
      handle = MethodHandles.publicLookup().unreflect(method)
        .asType(MethodType.methodType(void.class, NetSocketInternal.class, Handler.class));
      description = "reads Netty's buffers through " + method.getDeclaringClass().getSimpleName()
        + ".messageHandler, writes through writeMessage";
    } catch (NoSuchMethodException | IllegalAccessException | RuntimeException e) {
      description = "reads are copied from the public handler";
      off = "reads as Netty's buffers are off (every read is copied from the public handler): no "
        + socketType.getSimpleName() + ".messageHandler (" + e + ")";
    }
    this.messageHandler = handle;
    this.description = description;
    this.off = off;
  }

  /** Whether reads come as Netty's own buffers, uncopied. */
  boolean readsNettyBuffers() {
    return messageHandler != null;
  }

  /** Every read of {@code socket} goes to {@code reads}, which owns it and releases it. */
  void readNettyBuffers(NetSocketInternal socket, Consumer<ByteBuf> reads) {
    if (messageHandler == null) {
      socket.handler(buffer -> reads.accept(Unpooled.wrappedBuffer(buffer.getBytes())));
      return;
    }
    Handler<Object> handler = msg -> {
      if (msg instanceof ByteBuf bytes) {
        reads.accept(bytes);
      } else {
        ReferenceCountUtil.release(msg);
      }
    };
    try {
      messageHandler.invokeExact(socket, handler);
    } catch (Throwable e) {
      throw new IllegalStateException("NetSocketInternal.messageHandler failed", e);
    }
  }

  /** What is off on this line and why, or null. */
  String off() {
    return off;
  }

  /** For the start-up line: the Vert.x version and how reads reach a connection on it. */
  String description() {
    return "Vert.x " + vertxVersion() + ": " + description;
  }

  /** Vert.x's own view of {@code socket}, which every Vert.x 5 socket has. */
  static NetSocketInternal internal(NetSocket socket) {
    return (NetSocketInternal) socket;
  }

  /** The Netty channel under {@code socket}. */
  static Channel channelOf(NetSocket socket) {
    return internal(socket).channelHandlerContext().channel();
  }

  /** The transport {@code vertx} runs on: nio, epoll, io_uring (or kqueue). */
  static String transportName(Vertx vertx) {
    String name = ((VertxInternal) vertx).transport().getClass().getSimpleName().toLowerCase(Locale.ROOT);
    return name.replace("transport", "").replace("iouring", "io_uring");
  }

  /**
   * A handler that ignores its argument, whatever its type ({@code shutdownHandler}'s differs between the lines). A
   * lambda typed for either one casts its argument, and fails on the other line.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  static <T> Handler<T> anyArgument(Runnable action) {
    Handler<Object> handler = ignored -> action.run();
    return (Handler) handler;
  }

  static String vertxVersion() {
    try (InputStream in = Vertx.class.getClassLoader().getResourceAsStream("META-INF/vertx/vertx-version.txt")) {
      return in == null ? "(version unknown)" : new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
    } catch (IOException e) {
      return "(version unknown)";
    }
  }
}
