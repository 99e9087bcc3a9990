package dev.runbus.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Reads an event stream as its client would, one block (an event or a comment) at a time, as it arrives. */
public final class ServerSentEvents {

    private final InputStream in;

    public ServerSentEvents(InputStream in) {
        this.in = in;
    }

    /**
     * The next block, without the blank line that ends it ({@code "event: status\ndata: {...}"}, {@code
     * ": keep-alive"}), read on another thread so that a stream that holds its blocks back fails the test after
     * {@code deadline} rather than when the stream ends.
     *
     * @throws AssertionError when nothing complete arrived within the deadline, or the stream ended first
     */
    public String next(Duration deadline) throws InterruptedException {
        CompletableFuture<String> block = CompletableFuture.supplyAsync(this::read);
        try {
            return block.get(deadline.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            block.cancel(true);
            throw new AssertionError("nothing arrived on the event stream within " + deadline
                    + ": the server holds what it wrote back");
        } catch (ExecutionException e) {
            throw new AssertionError("reading the event stream failed: " + e.getCause().getMessage(), e.getCause());
        }
    }

    private String read() {
        java.io.ByteArrayOutputStream seen = new java.io.ByteArrayOutputStream();
        try {
            int last = -1;
            while (true) {
                int b = in.read();
                if (b < 0) {
                    throw new IllegalStateException("the stream ended; it had sent "
                            + seen.toString(StandardCharsets.UTF_8));
                }
                if (b == '\n' && last == '\n') {
                    String block = seen.toString(StandardCharsets.UTF_8);
                    return block.substring(0, block.length() - 1);
                }
                seen.write(b);
                last = b;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
