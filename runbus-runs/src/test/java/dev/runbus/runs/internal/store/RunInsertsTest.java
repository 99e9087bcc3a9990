package dev.runbus.runs.internal.store;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.RunsSchema;
import dev.runbus.runs.testing.TestDatabase;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link RunStore#insertAll} on the real PostgreSQL, for unordered runs (the insert in auto-commit) and ordered
 * ones (a transaction holding its users' locks): which insert counts as created, and what is committed.
 */
class RunInsertsTest {

    private String schema;

    @BeforeEach
    void schema() {
        schema = TestDatabase.newSchema();
    }

    @AfterEach
    void drop() {
        TestDatabase.dropSchema(schema);
    }

    private RunStore store(boolean ordered) {
        RunsSchema.migrate(TestDatabase.pool(), schema, ordered);
        return new RunStore(TestDatabase.pool(), schema, ordered);
    }

    private static RunStore.Insert insert(String key) {
        return new RunStore.Insert(UUID.randomUUID(), key, "hash-" + key, NewRun.of("s", "u", "in-" + key));
    }

    private long rows() {
        return TestDatabase.count("SELECT count(*) FROM " + schema + ".runs");
    }

    /**
     * The same insert again, as the group committer retries a batch item by item when its call failed after the
     * runs were committed: its run holds the key, so it is still reported created (and its trigger published).
     */
    @ParameterizedTest(name = "ordered = {0}")
    @ValueSource(booleans = {false, true})
    void anInsertRetriedAfterItsRunWasCommitted_isStillTheOneThatCreatedIt(boolean ordered) throws Exception {
        RunStore store = store(ordered);
        RunStore.Insert in = insert("k");
        store.insertAll(List.of(in), new ArrayList<>());

        List<Boolean> created = new ArrayList<>();
        List<RunStore.KeyOwner> owners = store.insertAll(List.of(in), created);

        assertThat(created).containsExactly(true);
        assertThat(owners).extracting(RunStore.KeyOwner::runId).containsExactly(in.id());
        assertThat(rows()).isEqualTo(1);
    }

    /** Another submission of a key that a committed run holds: not created, and the owner is that run. */
    @ParameterizedTest(name = "ordered = {0}")
    @ValueSource(booleans = {false, true})
    void anotherInsertOfAHeldKey_findsTheRunHoldingIt(boolean ordered) throws Exception {
        RunStore store = store(ordered);
        RunStore.Insert first = insert("k");
        store.insertAll(List.of(first), new ArrayList<>());

        List<Boolean> created = new ArrayList<>();
        List<RunStore.KeyOwner> owners = store.insertAll(List.of(insert("fresh"), insert("k")), created);

        assertThat(created).containsExactly(true, false);
        assertThat(owners.get(1).runId()).isEqualTo(first.id());
        assertThat(owners.get(1).bodyHash()).isEqualTo("hash-k");
        assertThat(rows()).isEqualTo(2);
    }

    /** Two inserts with one key in one call: the first creates the run, the second finds it. */
    @ParameterizedTest(name = "ordered = {0}")
    @ValueSource(booleans = {false, true})
    void twoInsertsOfOneKeyInOneCall_theFirstCreates(boolean ordered) throws Exception {
        RunStore store = store(ordered);
        RunStore.Insert first = insert("k");
        RunStore.Insert second = insert("k");

        List<Boolean> created = new ArrayList<>();
        List<RunStore.KeyOwner> owners = store.insertAll(List.of(first, second), created);

        assertThat(created).containsExactly(true, false);
        assertThat(owners).extracting(RunStore.KeyOwner::runId).containsExactly(first.id(), first.id());
        assertThat(rows()).isEqualTo(1);
    }

    /**
     * A data source whose connections start in a transaction (auto-commit off by default): the inserted runs are
     * committed all the same, seen by another connection once the call returns.
     */
    @ParameterizedTest(name = "ordered = {0}")
    @ValueSource(booleans = {false, true})
    void aDataSourceWithoutAutoCommit_stillCommitsTheRuns(boolean ordered) throws Exception {
        store(ordered);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(TestDatabase.URL);
        config.setMaximumPoolSize(2);
        config.setAutoCommit(false);
        try (HikariDataSource manual = new HikariDataSource(config)) {
            RunStore store = new RunStore(manual, schema, ordered);

            List<Boolean> created = new ArrayList<>();
            store.insertAll(List.of(insert("a"), insert("b")), created);

            assertThat(created).containsExactly(true, true);
            assertThat(rows()).isEqualTo(2);
        }
    }
}
