package dev.runbus.bench;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The message every contender gets: {@value #SIZE} ASCII bytes that start with the enqueue time (19 decimal
 * digits of {@link System#nanoTime()} relative to this JVM's start of the benchmark), then a marker byte
 * ({@code p} for a poison message, {@code x} otherwise), then filler. ASCII, so that contenders configured
 * with string codecs (as their users would) read it unchanged.
 */
public final class Payloads {

    public static final int SIZE = 200;
    private static final int DIGITS = 19;
    private static final long ORIGIN = System.nanoTime();

    private Payloads() {
    }

    /** Nanoseconds on the benchmark's clock; what payloads carry. */
    public static long now() {
        return System.nanoTime() - ORIGIN;
    }

    public static byte[] make(long enqueuedAt, boolean poison) {
        byte[] b = new byte[SIZE];
        Arrays.fill(b, (byte) 'x');
        long v = Math.max(0, enqueuedAt);
        for (int i = DIGITS - 1; i >= 0; i--) {
            b[i] = (byte) ('0' + (v % 10));
            v /= 10;
        }
        b[DIGITS] = (byte) (poison ? 'p' : 'x');
        return b;
    }

    public static long enqueuedAt(byte[] payload) {
        long v = 0;
        for (int i = 0; i < DIGITS; i++) {
            v = v * 10 + (payload[i] - '0');
        }
        return v;
    }

    public static long enqueuedAt(CharSequence payload) {
        long v = 0;
        for (int i = 0; i < DIGITS; i++) {
            v = v * 10 + (payload.charAt(i) - '0');
        }
        return v;
    }

    public static boolean isPoison(byte[] payload) {
        return payload.length > DIGITS && payload[DIGITS] == 'p';
    }

    public static String text(byte[] payload) {
        return new String(payload, StandardCharsets.US_ASCII);
    }
}
