package dev.runbus.runs;

import java.util.Objects;
import java.util.Optional;

/**
 * Which submissions an idempotency key is shared with. {@link #GLOBAL}, what {@link Runs#submit(NewRun)} uses:
 * every submission without a scope, the key stored as given. {@link #of(String)}: only submissions of the same
 * owner; the key stored is derived from the owner and the key (SHA-256), so two owners never meet through a key,
 * and a scoped key never meets a global one. The HTTP API scopes keys by token name: a client cannot take another
 * client's key, nor learn another client's run from a duplicate or a conflict.
 *
 * <p>The derived key is stored as {@code scoped:} and 64 hexadecimal digits. A global key of that form is not
 * refused, but could name a scoped run: callers of the Java API should not use one.
 */
public final class KeyScope {

    public static final KeyScope GLOBAL = new KeyScope(null);

    private final String owner;

    private KeyScope(String owner) {
        this.owner = owner;
    }

    /** @param owner who the keys belong to, non-empty; compared exactly */
    public static KeyScope of(String owner) {
        Objects.requireNonNull(owner, "owner");
        if (owner.isEmpty()) {
            throw new IllegalArgumentException("a key scope's owner must not be empty");
        }
        return new KeyScope(owner);
    }

    /** Empty for {@link #GLOBAL}. */
    public Optional<String> owner() {
        return Optional.ofNullable(owner);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KeyScope k && Objects.equals(owner, k.owner);
    }

    @Override
    public int hashCode() {
        return Objects.hashCode(owner);
    }

    @Override
    public String toString() {
        return owner == null ? "KeyScope[global]" : "KeyScope[" + owner + "]";
    }
}
