package dev.runbus.runs;

/**
 * An effect was initiated by an earlier attempt whose outcome was never recorded: the call may or may not
 * have reached the external system. runbus does not call it again; the key tells the external system which
 * request to look up.
 */
public class EffectInDoubtException extends Exception {
    private static final long serialVersionUID = 1L;
    private final String effect;
    private final String idempotencyKey;

    public EffectInDoubtException(String effect, String idempotencyKey) {
        super("effect '" + effect + "' was initiated by an earlier attempt with key " + idempotencyKey
                + " and its outcome is unknown; it is not initiated again");
        this.effect = effect;
        this.idempotencyKey = idempotencyKey;
    }

    public String effect() {
        return effect;
    }

    public String idempotencyKey() {
        return idempotencyKey;
    }
}
