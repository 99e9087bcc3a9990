package dev.runbus;

/**
 * Options of a {@link Publisher}.
 *
 * @param maxLenApprox      when positive, each XADD trims the stream to about this many entries
 *                          ({@code MAXLEN ~}). This is a lossy cap: entries can be trimmed before every group
 *                          has acknowledged them. Default 0: no cap, the stream keeps everything until trimmed
 *                          explicitly.
 * @param idempotentAppends on a server that has it (Redis 8.6 and later), each XADD carries {@code IDMP}, so
 *                          that one the client re-sends after its reply was lost with its connection appends
 *                          nothing the second time (within the server's window: docs/architecture.md,
 *                          "Idempotent appends"). Default true; false sends plain XADDs on every server (to
 *                          compare, or to spare the server the few bytes per message it keeps for it).
 */
public record PublishOptions(long maxLenApprox, boolean idempotentAppends) {

    public static final PublishOptions DEFAULT = new PublishOptions(0, true);

    public PublishOptions {
        if (maxLenApprox < 0) {
            throw new IllegalArgumentException("maxLenApprox must be 0 (no cap) or positive, got " + maxLenApprox);
        }
    }

    /** A cap, with idempotent appends. */
    public PublishOptions(long maxLenApprox) {
        this(maxLenApprox, true);
    }

    public static PublishOptions cappedAt(long maxLenApprox) {
        return new PublishOptions(maxLenApprox);
    }

    /** These options with plain XADDs on every server ({@link #idempotentAppends()} false). */
    public PublishOptions withoutIdempotentAppends() {
        return new PublishOptions(maxLenApprox, false);
    }
}
