package dev.runbus.internal.consume;

import dev.runbus.Outcome;

/**
 * Decides what happens to an entry, in one place for every path (new read, own-pending recovery, takeover).
 * The delivery count counts handler starts (docs/architecture.md, rule 13): in an unordered group from the partition's start
 * record (record_starts.lua), in an ordered group from its start record (ordered_start.lua); never the pending
 * list's own count, which also counts reads and claims whose reply was lost.
 */
public final class OutcomePolicy {

    static final int MAX_REASON_LENGTH = 1000;

    private final int maxDeliveries;

    public OutcomePolicy(int maxDeliveries) {
        this.maxDeliveries = maxDeliveries;
    }

    /**
     * The one decision after a handler call: success acks; a failure retries while deliveries are left, and
     * dead-letters on the last allowed delivery.
     */
    public Outcome afterHandler(long deliveries, Throwable failure) {
        if (failure == null) {
            return Outcome.ACK;
        }
        return deliveries >= maxDeliveries ? Outcome.DEAD_LETTER : Outcome.RETRY;
    }

    /**
     * Before a handler call: an entry started {@code maxDeliveries} times, and then once more alone, without an
     * outcome (its processes died on it) is not run again but dead-lettered.
     */
    public boolean isAbandoned(long deliveries) {
        return deliveries > maxDeliveries + 1L;
    }

    /**
     * Before a handler call: an entry started {@code maxDeliveries} times without an outcome runs once more, alone
     * among the handlers of its bus ({@link HandlerGate}). When a process dies, every handler running in it has its
     * start counted; run alone, a start that ends with the process is the entry's own.
     */
    public boolean runsAlone(long deliveries) {
        return deliveries > maxDeliveries;
    }

    public static String abandonedReason(long deliveries, String lastOwner) {
        return "abandoned " + (deliveries - 1) + " times, last owner "
                + (lastOwner == null || lastOwner.isEmpty() ? "unknown" : lastOwner);
    }

    /** The exception's class and message, cut to {@value #MAX_REASON_LENGTH} characters. */
    public static String failureReason(Throwable failure) {
        String reason = failure.getClass().getName() + (failure.getMessage() == null ? "" : ": " + failure.getMessage());
        return bounded(reason);
    }

    /**
     * A reason as the dead letter keeps it: control characters other than newline and tab removed (an exception's
     * message often quotes the input that failed, and the reason is shown in terminals and over HTTP, where an
     * escape sequence would act), then cut to {@value #MAX_REASON_LENGTH} characters ending in "…", never inside
     * a character.
     */
    static String bounded(String reason) {
        StringBuilder b = new StringBuilder(Math.min(reason.length(), MAX_REASON_LENGTH));
        for (int i = 0; i < reason.length(); i++) {
            char c = reason.charAt(i);
            if (!Character.isISOControl(c) || c == '\n' || c == '\t') {
                b.append(c);
            }
        }
        if (b.length() <= MAX_REASON_LENGTH) {
            return b.toString();
        }
        int keep = MAX_REASON_LENGTH - 1;
        if (Character.isHighSurrogate(b.charAt(keep - 1))) {
            keep--;
        }
        return b.substring(0, keep) + "…";
    }
}
