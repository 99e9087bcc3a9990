package dev.runbus.runs.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.runs.NewRun;
import dev.runbus.runs.testing.TestDatabase;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Starting attempts on the real PostgreSQL: which stream entry becomes a run's current attempt. */
class RunStoreAttemptsTest {

    private String schema;
    private RunStore store;

    @BeforeEach
    void schema() {
        schema = TestDatabase.newSchema();
        Migrations.apply(TestDatabase.pool(), schema);
        store = new RunStore(TestDatabase.pool(), schema);
    }

    @AfterEach
    void drop() {
        TestDatabase.dropSchema(schema);
    }

    private UUID newRun() throws Exception {
        UUID id = UUID.randomUUID();
        store.insertAll(List.of(new RunStore.Insert(id, "key-" + id, "hash", NewRun.of("s", "u", "in"))),
                new ArrayList<>());
        return id;
    }

    /**
     * Two triggers of one run in one read batch: the newer entry is the current attempt, compared as stream
     * ids (milliseconds, then sequence), not as text, where "…-9" sorts after "…-10". A dead letter fails a run
     * only while its entry is the current attempt, so the wrong one would let the newer one's dead letter pass.
     */
    @Test
    void twoTriggersOfOneRunInOneBatch_theNewerEntryIsTheCurrentAttempt() throws Exception {
        UUID run = newRun();
        List<Optional<RunStore.Attempt>> started = store.startAttempts(List.of(
                new RunStore.AttemptRequest(run, "1700000000000-9"),
                new RunStore.AttemptRequest(run, "1700000000000-10")));

        assertThat(started).allMatch(Optional::isPresent);
        assertThat(TestDatabase.count("SELECT attempts FROM " + schema + ".runs WHERE id = '" + run + "'"))
                .isEqualTo(2);
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE id = '" + run
                + "' AND stream_id = '1700000000000-10'")).isEqualTo(1);

        store.startAttempts(List.of(new RunStore.AttemptRequest(run, "999999999999-5"),
                new RunStore.AttemptRequest(run, "1700000000001-0")));
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE id = '" + run
                + "' AND stream_id = '1700000000001-0'")).isEqualTo(1);
    }
}
