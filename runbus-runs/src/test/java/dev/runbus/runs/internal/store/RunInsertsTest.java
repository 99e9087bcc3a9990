package dev.runbus.runs.internal.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.RunsSchema;
import dev.runbus.runs.testing.StatementHooks;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.TestServers;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link RunStore#insertAll} on the real PostgreSQL, for unordered runs (the insert in auto-commit) and ordered
 * ones (a transaction holding its users' locks): which insert counts as created, and what is committed.
 */
class RunInsertsTest {

    private static final String LOOKUP = "SELECT idempotency_key";

    private String schema;

    @BeforeEach
    void schema() {
        schema = TestServers.newSchema("rt");
    }

    @AfterEach
    void drop() {
        TestServers.dropSchema(schema);
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
        store.insertAll(List.of(in));

        List<RunStore.Inserted> again = store.insertAll(List.of(in));

        assertThat(again).extracting(RunStore.Inserted::created).containsExactly(true);
        assertThat(again.get(0).owner().runId()).isEqualTo(in.id());
        assertThat(rows()).isEqualTo(1);
    }

    /** Another submission of a key that a committed run holds: not created, and the owner is that run. */
    @ParameterizedTest(name = "ordered = {0}")
    @ValueSource(booleans = {false, true})
    void anotherInsertOfAHeldKey_findsTheRunHoldingIt(boolean ordered) throws Exception {
        RunStore store = store(ordered);
        RunStore.Insert first = insert("k");
        store.insertAll(List.of(first));

        List<RunStore.Inserted> out = store.insertAll(List.of(insert("fresh"), insert("k")));

        assertThat(out).extracting(RunStore.Inserted::created).containsExactly(true, false);
        assertThat(out.get(1).owner().runId()).isEqualTo(first.id());
        assertThat(out.get(1).owner().bodyHash()).isEqualTo("hash-k");
        assertThat(rows()).isEqualTo(2);
    }

    /** Two inserts with one key in one call: the first creates the run, the second finds it. */
    @ParameterizedTest(name = "ordered = {0}")
    @ValueSource(booleans = {false, true})
    void twoInsertsOfOneKeyInOneCall_theFirstCreates(boolean ordered) throws Exception {
        RunStore store = store(ordered);
        RunStore.Insert first = insert("k");
        RunStore.Insert second = insert("k");

        List<RunStore.Inserted> out = store.insertAll(List.of(first, second));

        assertThat(out).extracting(RunStore.Inserted::created).containsExactly(true, false);
        assertThat(out).extracting(i -> i.owner().runId()).containsExactly(first.id(), first.id());
        assertThat(rows()).isEqualTo(1);
    }

    /**
     * Unordered: the lookup of a conflicting key fails (the connection lost, SQLState 08006) after the insert
     * committed the batch's new runs. Those runs are reported created, so their triggers get published and their
     * callers are not told to submit them again; only the insert whose key conflicted fails.
     */
    @Test
    void aLookupThatFails_failsOnlyTheInsertItWasFor() throws Exception {
        RunStore store = store(false);
        store.insertAll(List.of(insert("held")));
        RunStore failing = new RunStore(failingLookups(TestDatabase.pool()), schema, false);
        RunStore.Insert a = insert("a");
        RunStore.Insert b = insert("b");

        List<RunStore.Inserted> out = failing.insertAll(List.of(a, insert("held"), b));

        assertThat(out).extracting(RunStore.Inserted::created).containsExactly(true, false, true);
        assertThat(out).extracting(i -> i.owner() == null ? null : i.owner().runId())
                .containsExactly(a.id(), null, b.id());
        assertThat(out.get(1).failure().getSQLState()).isEqualTo("08006");
        assertThat(out).extracting(RunStore.Inserted::failure).filteredOn(f -> f != null).hasSize(1);
        assertThat(rows()).isEqualTo(3);
    }

    /** Ordered: the same failure undoes the whole call (one transaction); nothing of it is committed. */
    @Test
    void aLookupThatFails_inOrderedRuns_commitsNothing() throws Exception {
        store(true).insertAll(List.of(insert("held")));
        RunStore failing = new RunStore(failingLookups(TestDatabase.pool()), schema, true);

        assertThatThrownBy(() -> failing.insertAll(List.of(insert("a"), insert("held"))))
                .isInstanceOf(SQLException.class).extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("08006");
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
            List<RunStore.Inserted> out = new RunStore(manual, schema, ordered).insertAll(List.of(insert("a"),
                    insert("b")));

            assertThat(out).extracting(RunStore.Inserted::created).containsExactly(true, true);
            assertThat(rows()).isEqualTo(2);
        }
    }

    /** The statement that looks up conflicting keys fails as a lost connection would. */
    private static DataSource failingLookups(DataSource real) {
        return StatementHooks.around(real, sql -> {
            if (sql.startsWith(LOOKUP)) {
                throw new SQLException("connection lost (test)", "08006");
            }
        });
    }
}
