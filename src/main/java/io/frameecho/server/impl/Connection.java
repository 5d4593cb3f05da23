package io.frameecho.server.impl;

import io.frameecho.protocol.FrameParser;
import io.frameecho.protocol.FrameTooLargeException;
import io.frameecho.protocol.Frames;
import io.frameecho.server.RequestHandler;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;

/**
 * One client connection: the book's {@code Conn}, and the event-loop half of its {@code handle_read},
 * {@code handle_write} and {@code want_read}/{@code want_write}/{@code want_close}.
 * <ul>
 *   <li>{@link #onRequest} is {@code try_one_request} after parsing: it hands the payload to the
 *   application and queues the answer;</li>
 *   <li>{@link #releaseAnswered} is {@code handle_write}: it writes answers in request order to the
 *   socket's write queue, which stands in for {@code Conn::outgoing};</li>
 *   <li>{@link #stopReading}/{@link #startReading} are {@code want_read} turning off and on: reading stops
 *   while the write queue is full (until it drains) or while {@code maxInFlight} answers are awaited,
 *   which bounds memory;</li>
 *   <li>{@link #closeAfterAnswers} is {@code want_close}.</li>
 * </ul>
 * Everything runs on the connection's event loop.
 */
public final class Connection {

  private static final Logger log = LoggerFactory.getLogger(Connection.class);
  private static final int LOGGED_PAYLOAD_BYTES = 100;

  private final NetSocket socket;
  private final FrameParser parser;
  private final RequestHandler handler;

  /**
   * Answers not yet written, oldest first. Stays empty while answers complete at once (echo): a
   * response is then written straight away.
   */
  private final ArrayDeque<Future<Buffer>> unreleased = new ArrayDeque<>();
  /** Why reading is paused, one bit per reason; the book's {@code want_read} is this being zero. */
  private int readingStoppedFor;
  private final int maxInFlight;
  /** The book's {@code want_close}, with its reason; the first reason wins. */
  private CloseReason closeReason;
  /** The socket error behind an {@link CloseReason#IO_ERROR}, for the close line. */
  private Throwable ioError;
  private boolean closeRequested;

  /** Reading stops while the write queue is over its high-water mark ... */
  private static final int WRITE_QUEUE_FULL = 1;
  /** ... or while {@code maxInFlight} answers are awaited. */
  private static final int TOO_MANY_IN_FLIGHT = 2;

  public Connection(NetSocket socket, RequestHandler handler, int maxFrameSize, int maxInFlight) {
    this.socket = socket;
    this.handler = handler;
    this.maxInFlight = maxInFlight;
    this.parser = FrameParser.reading(socket, maxFrameSize);
  }

  /** Wires the socket's events; called once, on the event loop, when the connection is accepted. */
  public void start() {
    if (log.isDebugEnabled()) {
      log.debug("new client from {}", socket.remoteAddress());
    }
    socket.drainHandler(v -> startReading(WRITE_QUEUE_FULL));
    socket.closeHandler(v -> onClosed());
    parser.endHandler(v -> onEnd());
    parser.exceptionHandler(this::onError);
    parser.frameHandler(this::onRequest);
  }

  private void onRequest(Buffer payload) {
    if (log.isTraceEnabled()) {
      log.trace("{} client says: len:{} data:{}", socket.remoteAddress(), payload.length(), preview(payload));
    }
    Future<Buffer> answer;
    try {
      answer = handler.handle(payload);
    } catch (RuntimeException e) {
      answer = Future.failedFuture(e);
    }
    if (unreleased.isEmpty() && answer.isComplete()) {
      release(answer);
      closeIfDone();
    } else {
      unreleased.add(answer);
      if (unreleased.size() >= maxInFlight) {
        stopReading(TOO_MANY_IN_FLIGHT);
      }
      answer.onComplete(ar -> releaseAnswered());
    }
  }

  /** Writes every answer at the head of the queue that has completed, stopping at the first pending one. */
  private void releaseAnswered() {
    Future<Buffer> head;
    while ((head = unreleased.peek()) != null && head.isComplete()) {
      unreleased.poll();
      release(head);
    }
    if (unreleased.size() < maxInFlight) {
      startReading(TOO_MANY_IN_FLIGHT);
    }
    closeIfDone();
  }

  private void release(Future<Buffer> answer) {
    if (answer.succeeded()) {
      writeResponse(answer.result());
    } else {
      // Answers queued behind a failed one are dropped: the connection ends after what came before.
      unreleased.clear();
      log.warn("{} closing: request handler failed: {}", socket.remoteAddress(), answer.cause().toString());
      closeAfterAnswers(CloseReason.HANDLER_FAILED);
    }
  }

  private void writeResponse(Buffer payload) {
    if (closeRequested) {
      return;
    }
    socket.write(Frames.header(payload.length()));
    socket.write(payload);
    if (socket.writeQueueFull()) {
      stopReading(WRITE_QUEUE_FULL);
    }
  }

  private void stopReading(int reason) {
    if (readingStoppedFor == 0) {
      parser.pause();
    }
    readingStoppedFor |= reason;
  }

  private void startReading(int reason) {
    if ((readingStoppedFor & reason) == 0) {
      return;
    }
    readingStoppedFor &= ~reason;
    if (readingStoppedFor == 0 && closeReason == null) {
      parser.resume();
    }
  }

  private void onError(Throwable error) {
    if (error instanceof FrameTooLargeException) {
      FrameTooLargeException e = (FrameTooLargeException) error;
      log.warn("{} protocol error: frame length {} exceeds maxFrameSize {}; closing after the earlier responses",
        socket.remoteAddress(), e.length(), e.maxFrameSize());
      closeAfterAnswers(CloseReason.PROTOCOL_ERROR);
    } else {
      if (closeReason == null) {
        closeReason = CloseReason.IO_ERROR;
        ioError = error;
      }
      closeRequested = true;
      socket.close();
    }
  }

  private void onEnd() {
    if (closeReason == null) {
      closeReason = parser.atFrameBoundary() ? CloseReason.CLIENT_CLOSED : CloseReason.UNEXPECTED_EOF;
    }
    closeIfDone();
  }

  /** The book's {@code want_close}: stop reading now, close once the earlier requests are answered. */
  private void closeAfterAnswers(CloseReason reason) {
    if (closeReason == null) {
      closeReason = reason;
    }
    parser.pause();
    closeIfDone();
  }

  private void closeIfDone() {
    if (closeReason != null && unreleased.isEmpty() && !closeRequested) {
      closeRequested = true;
      // close() flushes what is queued before it closes the channel.
      socket.close();
    }
  }

  private void onClosed() {
    if (closeReason == null) {
      // The socket closed before its end reached the parser (reading was paused).
      closeReason = parser.atFrameBoundary() ? CloseReason.CLIENT_CLOSED : CloseReason.UNEXPECTED_EOF;
    }
    unreleased.clear();
    if (log.isDebugEnabled()) {
      if (ioError == null) {
        log.debug("{} {}", socket.remoteAddress(), closeReason);
      } else {
        log.debug("{} {}: {}", socket.remoteAddress(), closeReason, ioError.getMessage());
      }
    }
  }

  private static String preview(Buffer payload) {
    int n = Math.min(payload.length(), LOGGED_PAYLOAD_BYTES);
    return new String(payload.getBytes(0, n), StandardCharsets.ISO_8859_1);
  }
}
