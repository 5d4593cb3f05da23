/**
 * The runnable jar's command line: the launcher and its subcommands ({@code client}, {@code bench},
 * {@code check-config}). <b>Rule:</b> the runnable jar only; nothing in the library depends on it.
 */
package io.frameecho.cli;
