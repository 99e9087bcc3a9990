package dev.runbus.runs.internal.store;

import dev.runbus.runs.EffectInDoubtException;
import dev.runbus.runs.Effects;
import java.util.Optional;
import java.util.UUID;

/** {@link Effects} of one run, recorded in {@code run_effects} (one row per run and effect name). */
public final class StoredEffects implements Effects {

    private final EffectStore store;
    private final UUID runId;

    public StoredEffects(EffectStore store, UUID runId) {
        this.store = store;
        this.runId = runId;
    }

    @Override
    public String once(String name, EffectCall call) throws Exception {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("effect name must not be blank");
        }
        // The run id has a fixed form without colons, so no two (run, effect) pairs share a key.
        String key = runId + ":" + name;
        if (store.initiateEffect(runId, name, key)) {
            String result = call.call(key);
            String stored = result == null ? "" : result;
            store.completeEffect(runId, name, stored);
            return stored;
        }
        Optional<EffectStore.EffectRow> row = store.effect(runId, name);
        if (row.isPresent() && row.get().result().isPresent()) {
            return row.get().result().get();
        }
        throw new EffectInDoubtException(name, row.map(EffectStore.EffectRow::idempotencyKey).orElse(key));
    }
}
