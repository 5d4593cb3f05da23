/** An application behind the event-bus handler: the upper-case consumer. Runs on its own verticle's event loop. */
package io.frameecho.example;
