package dev.runbus.runs;

/**
 * Irreversible side effects of a run (a payment, an e-mail, a call to another service), each initiated at
 * most once per run across every attempt and every process.
 */
public interface Effects {

    /**
     * Runs {@code call} unless this run already initiated the effect {@code name}. Before the call, an
     * "initiated" row (unique per run and name) is committed; the call receives the effect's idempotency
     * key ({@code <run id>:<name>}, the same on every attempt) to hand to the external system; its result is
     * stored when it returns.
     *
     * <ul>
     *   <li>first time: the call runs and its result is returned;</li>
     *   <li>initiated and completed before: the stored result is returned, the call does not run;</li>
     *   <li>initiated before but its outcome never recorded (the process died during the call):
     *       {@link EffectInDoubtException} — the call is not made a second time; ask the external system
     *       with the key what happened.</li>
     * </ul>
     */
    String once(String name, EffectCall call) throws Exception;

    /** An external call that receives the effect's idempotency key and returns a result to store (may be "" ). */
    @FunctionalInterface
    interface EffectCall {
        String call(String idempotencyKey) throws Exception;
    }
}
