package dev.runbus;

/** When a subscription acknowledges an entry. */
public enum AckMode {
    /** The default and the rule: acknowledge after the handler returned normally (at-least-once). */
    AFTER_WORK,
    /**
     * Opt-in for telemetry-like traffic where losing a message is acceptable: acknowledge a batch as soon as
     * it is read, before any handler runs (at-most-once). A failing handler or a crash loses the message;
     * nothing is retried or dead-lettered.
     */
    BEFORE_WORK
}
