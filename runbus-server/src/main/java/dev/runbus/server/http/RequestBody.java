package dev.runbus.server.http;

import io.javalin.http.Context;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLDecoder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.http.BadMessageException;

/**
 * The one way a route reads a request body: at most {@code --max-body} bytes, whatever the request claims, within
 * {@code --request-timeout}. Javalin's own readers ({@code ctx.body()}, {@code ctx.formParam}) check only a
 * {@code Content-Length}, so a chunked body would be read whole into the heap, and a multipart one written to the
 * temporary folder: no route calls them.
 *
 * <p>A chunked body has no length to check beforehand, so one byte more than the limit is read and means 413. The
 * body must arrive within the timeout of the first read (each blocking read waits at most as long, by Jetty's
 * blocking idle timeout): a client that stops halfway, or trickles, holds the thread no longer. Time the request
 * spent queued before the handler ran does not count against the client.
 */
public final class RequestBody {

    /** The media type of an HTML form; the only one the sign-in takes. */
    public static final String FORM = "application/x-www-form-urlencoded";

    private final int maxBytes;
    private final long timeoutNanos;

    public RequestBody(int maxBytes, Duration timeout) {
        this.maxBytes = maxBytes;
        this.timeoutNanos = timeout.toNanos();
    }

    /** The reader {@code --max-body} and {@code --request-timeout} describe. */
    public static RequestBody of(dev.runbus.server.Settings s) {
        return new RequestBody(s.integer(dev.runbus.server.Setting.MAX_BODY, 1),
                s.duration(dev.runbus.server.Setting.REQUEST_TIMEOUT));
    }

    /** The largest body read, in bytes. */
    public int maxBytes() {
        return maxBytes;
    }

    /**
     * Refuses (413) a request whose {@code Content-Length} is over the limit before anything reads it: run for
     * every route, with or without a scope, so that no route's own reading comes first.
     */
    void refuseDeclaredTooLarge(Context ctx) {
        if (ctx.contentLength() > maxBytes) {
            throw tooLarge();
        }
    }

    /** The whole body, at most {@link #maxBytes()}: 413 past it, 408 when it does not arrive in time. */
    public byte[] read(Context ctx) {
        if (ctx.contentLength() > maxBytes) {
            throw tooLarge();
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        long deadline = System.nanoTime() + timeoutNanos;
        byte[] buffer = new byte[8192];
        try (InputStream in = ctx.req().getInputStream()) {
            int n;
            while (body.size() <= maxBytes
                    && (n = in.read(buffer, 0, Math.min(buffer.length, maxBytes + 1 - body.size()))) >= 0) {
                body.write(buffer, 0, n);
                if (System.nanoTime() > deadline && body.size() <= maxBytes) {
                    throw late();
                }
            }
        } catch (IOException e) {
            // A blocking read that waited out the timeout: Jetty's IOException caused by a TimeoutException.
            throw e.getCause() instanceof TimeoutException ? late() : unreadable();
        } catch (BadMessageException e) { // a malformed chunk, or Jetty's own timeout
            throw e.getCode() == 408 ? late() : unreadable();
        }
        if (body.size() > maxBytes) {
            throw tooLarge();
        }
        return body.toByteArray();
    }

    /**
     * The fields of an HTML form ({@value #FORM}, UTF-8), read through {@link #read}: 415 for any other type (a
     * multipart body is refused before a byte of it is read), 400 for one that does not decode. A field given twice
     * keeps its first value.
     */
    public Map<String, String> form(Context ctx) {
        String type = ctx.contentType();
        String media = type == null ? "" : type.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
        if (!media.equals(FORM)) {
            throw new ApiError(415, "Content-Type must be " + FORM, null);
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(read(ctx))).toString();
        } catch (CharacterCodingException e) {
            throw ApiError.badRequest("the form is not UTF-8", null);
        }
        Map<String, String> fields = new HashMap<>();
        if (text.isEmpty()) {
            return fields;
        }
        for (String pair : text.split("&")) {
            int eq = pair.indexOf('=');
            try {
                String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
                String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
                fields.putIfAbsent(name, value);
            } catch (IllegalArgumentException e) {
                throw ApiError.badRequest("the form is not URL-encoded", null);
            }
        }
        return fields;
    }

    private ApiError tooLarge() {
        return new ApiError(413, "the body is larger than the limit of " + maxBytes + " bytes", null);
    }

    private static ApiError late() {
        return new ApiError(408, "the body did not arrive in time", null);
    }

    private static ApiError unreadable() {
        return new ApiError(400, "the body could not be read", null);
    }
}
