package dev.runbus.bench;

/**
 * When an acknowledgement counts as confirmed, for every contender alike: the moment the client has Redis's
 * reply to the XACK in hand, on the thread that read it from the socket. For runbus ({@link AckObserver}), the
 * Lettuce loop and Redisson that is the client's event loop, in a callback of the reply's future; for Spring's
 * template, whose calls block, a command listener on its Lettuce client; naive Jedis reads the socket on the
 * calling thread, so it is stamped when the call returns. Stamping after a blocking call instead would add a
 * thread wake-up to the contenders that runbus's figures do not carry.
 */
final class AckStamp {

    private AckStamp() {
    }

    /** Every message of one acknowledged batch, given their enqueue times, acknowledged now. */
    static void all(Probe probe, long[] enqueued) {
        long now = Payloads.now();
        for (long e : enqueued) {
            probe.acked(e, now);
        }
    }
}
