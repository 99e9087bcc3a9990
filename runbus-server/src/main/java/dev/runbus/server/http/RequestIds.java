package dev.runbus.server.http;

import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * The id every response carries in {@code X-Request-Id} (and an error's body in {@code request_id}), under which the
 * log records what went wrong: 16 random hexadecimal digits, from the API's routes and from the errors Jetty
 * answers before a request reaches them alike.
 */
final class RequestIds {

    private static final SecureRandom RANDOM = new SecureRandom();

    private RequestIds() {
    }

    static String next() {
        byte[] b = new byte[8];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }
}
