package dev.runbus;

/**
 * Options of a {@link Publisher}.
 *
 * @param maxLenApprox when positive, each XADD trims the stream to about this many entries
 *                     ({@code MAXLEN ~}). This is a lossy cap: entries can be trimmed before every group
 *                     has acknowledged them. Default 0: no cap, the stream keeps everything until trimmed
 *                     explicitly.
 */
public record PublishOptions(long maxLenApprox) {

    public static final PublishOptions DEFAULT = new PublishOptions(0);

    public PublishOptions {
        if (maxLenApprox < 0) {
            throw new IllegalArgumentException("maxLenApprox must be 0 (no cap) or positive, got " + maxLenApprox);
        }
    }

    public static PublishOptions cappedAt(long maxLenApprox) {
        return new PublishOptions(maxLenApprox);
    }
}
