package io.frameecho.example;

import io.frameecho.server.HandlerOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A tiny application behind the frame protocol: consumes request payloads on an event-bus address
 * (config key {@code address}, default {@value HandlerOptions#DEFAULT_ADDRESS}) and replies with the
 * payload's ASCII letters upper-cased. Deploy it on any node of the cluster, next to a frame-echo
 * configured with {@code "handler": {"type": "eventbus"}}.
 */
public class UpperCaseConsumer extends VerticleBase {

  private static final Logger log = LoggerFactory.getLogger(UpperCaseConsumer.class);

  private MessageConsumer<Buffer> consumer;

  @Override
  public Future<?> start() {
    String address = config().getString("address", HandlerOptions.DEFAULT_ADDRESS);
    // tag::consumer[]
    consumer = vertx.eventBus().consumer(address, message -> message.reply(upperCase(message.body())));
    // end::consumer[]
    return consumer.completion().onSuccess(v -> log.info("upper-case consumer on event-bus address {}", address));
  }

  static Buffer upperCase(Buffer payload) {
    byte[] bytes = payload.getBytes();
    for (int i = 0; i < bytes.length; i++) {
      if (bytes[i] >= 'a' && bytes[i] <= 'z') {
        bytes[i] -= 'a' - 'A';
      }
    }
    return Buffer.buffer(bytes);
  }
}
