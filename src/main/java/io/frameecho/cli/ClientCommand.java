package io.frameecho.cli;

import io.frameecho.client.FrameClient;
import io.frameecho.client.ReconnectOptions;
import io.frameecho.protocol.LengthField;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.SocketAddress;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/** {@code client}: the book's {@code 06_client}, pipelined requests then one line per response. */
@Command(name = "client", mixinStandardHelpOptions = true, versionProvider = Versions.Provider.class,
  description = {"Sends messages pipelined on one connection and prints each response as len:N data:<first 100 bytes>.",
    "With no messages, sends the book's: hello1, hello2, hello3, 32 MiB of 'z', hello5."})
final class ClientCommand implements Callable<Integer> {

  @Option(names = {"-H", "--host"}, defaultValue = "127.0.0.1", description = "server host (default: ${DEFAULT-VALUE})")
  String host;

  @Option(names = {"-p", "--port"}, defaultValue = "1234", description = "server port (default: ${DEFAULT-VALUE})")
  int port;

  @Option(names = "--timeout", defaultValue = "60", description = "seconds to wait for all responses (default: ${DEFAULT-VALUE})")
  int timeoutSeconds;

  @Option(names = "--resend", description = "the messages are idempotent: re-send those left unanswered when the server "
    + "closes or resets the connection (a restart), once on each new connection, trying to reconnect at once, then after "
    + ReconnectOptions.DEFAULT_FIRST_DELAY_MS + " ms doubling up to " + ReconnectOptions.DEFAULT_MAX_DELAY_MS
    + " ms, for up to " + ReconnectOptions.DEFAULT_DEADLINE_MS + " ms")
  boolean resend;

  @Mixin
  UnixSocketOption unixSocket = new UnixSocketOption();

  @Mixin
  TlsClientOptions tls = new TlsClientOptions();

  @Mixin
  FramingOption framing = new FramingOption();

  @Spec
  CommandSpec spec;

  @Parameters(paramLabel = "MESSAGE", arity = "0..*", description = "messages to send, one frame each")
  List<String> messages = new ArrayList<>();

  private final PrintStream out;
  private final PrintStream err;

  ClientCommand(PrintStream out, PrintStream err) {
    this.out = out;
    this.err = err;
  }

  /** The command line of this command, writing results to {@code out} and diagnostics to {@code err}. */
  static CommandLine commandLine(PrintStream out, PrintStream err) {
    return new CommandLine(new ClientCommand(out, err))
      .setOut(new PrintWriter(out, true))
      .setErr(new PrintWriter(err, true))
      .setParameterExceptionHandler(Main.oneLineUsageErrors("client"))
      .setExecutionExceptionHandler(Main.oneLineFailures("client"));
  }

  /** The book's query list. */
  static List<Buffer> bookRequests() {
    byte[] big = new byte[LengthField.DEFAULT_MAX_FRAME_SIZE];
    Arrays.fill(big, (byte) 'z');
    return List.of(Buffer.buffer("hello1"), Buffer.buffer("hello2"), Buffer.buffer("hello3"),
      Buffer.buffer(big), Buffer.buffer("hello5"));
  }

  @Override
  public Integer call() {
    tls.check(spec);
    io.frameecho.protocol.LengthField form = framing.form(spec);
    String socketPath = unixSocket.check(spec, tls.tls);
    SocketAddress server = socketPath != null ? SocketAddress.domainSocketAddress(socketPath) : SocketAddress.inetSocketAddress(port, host);
    String where = socketPath != null ? "unix:" + socketPath : host + ":" + port;
    List<Buffer> requests = new ArrayList<>();
    if (messages.isEmpty()) {
      requests.addAll(bookRequests());
    } else {
      for (String m : messages) {
        requests.add(Buffer.buffer(m.getBytes(StandardCharsets.UTF_8)));
      }
    }
    Vertx vertx = Vertx.vertx();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    FrameClient client = null;
    try {
      client = waitFor(FrameClient.connect(vertx, tls.netClientOptions(), server, form, LengthField.DEFAULT_MAX_FRAME_SIZE), deadline);
      client.resendIdempotent(resend);
      List<Future<Buffer>> answers = new ArrayList<>();
      for (Buffer r : requests) {
        answers.add(client.request(r));
      }
      // Each answer is printed as it arrives, in order: what arrived before an error is shown.
      for (Future<Buffer> answer : answers) {
        out.println(describe(waitFor(answer, deadline)));
      }
      return 0;
    } catch (java.util.concurrent.TimeoutException e) {
      err.println("frame-echo client: no complete answer within " + timeoutSeconds + " s");
      return 1;
    } catch (Exception e) {
      Throwable cause = e instanceof java.util.concurrent.ExecutionException ? e.getCause() : e;
      // A unix socket that is not there fails to connect with "No such file or directory", not a ConnectException.
      boolean refused = cause instanceof java.net.ConnectException
        || (socketPath != null && client == null && cause instanceof java.net.SocketException);
      err.println("frame-echo client: " + (refused
        ? "refused: nothing accepts connections on " + where + " (" + cause.getMessage() + ")"
        : tlsFailure(cause) != null ? "TLS handshake failed: " + tlsFailure(cause).getMessage()
          + (tls.trust != null ? "" : " (a server with a self-signed certificate needs --trust CERT.pem)")
        : cause.getMessage()));
      return 1;
    } finally {
      if (client != null) {
        client.close();
      }
      vertx.close().toCompletionStage().toCompletableFuture().orTimeout(10, TimeUnit.SECONDS).exceptionally(t -> null).join();
    }
  }

  /** The root of a TLS failure under {@code error}, if it is one: Vert.x says only "Failed to create SSL connection". */
  private static Throwable tlsFailure(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof javax.net.ssl.SSLException) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
          root = root.getCause();
        }
        return root;
      }
    }
    return null;
  }

  private static <T> T waitFor(Future<T> future, long deadlineNanos) throws Exception {
    long left = Math.max(0, deadlineNanos - System.nanoTime());
    return future.toCompletionStage().toCompletableFuture().get(left, TimeUnit.NANOSECONDS);
  }

  /** The book's {@code read_res} line: {@code len:N data:<first 100 bytes>}. */
  static String describe(Buffer payload) {
    int n = Math.min(payload.length(), 100);
    return "len:" + payload.length() + " data:" + new String(payload.getBytes(0, n), StandardCharsets.ISO_8859_1);
  }
}
