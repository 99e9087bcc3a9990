package dev.runbus.runs.internal.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/**
 * Our own grouping logic, with a fake transaction that records what it was given (no database: the test is
 * about which items share a transaction, not about SQL).
 */
class GroupCommitterTest {

    final List<List<String>> transactions = new CopyOnWriteArrayList<>();

    GroupCommitter<String, String> committer(int maxBatch) {
        return new GroupCommitter<>("test-commit", maxBatch, items -> {
            if (items.contains("bad")) {
                throw new SQLException("constraint violated by bad");
            }
            transactions.add(List.copyOf(items));
            List<String> out = new ArrayList<>();
            items.forEach(i -> out.add(i + ":ok"));
            return out;
        });
    }

    static List<String> group(String name, int n) {
        List<String> items = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            items.add(name + "-" + i);
        }
        return items;
    }

    @Test
    void aGroupSharesOneTransaction_whateverElseIsWaiting() throws Exception {
        try (GroupCommitter<String, String> c = committer(500)) {
            List<List<CompletableFuture<String>>> all = new ArrayList<>();
            for (int g = 0; g < 20; g++) {
                all.add(c.submitAll(group("g" + g, 100)));
            }
            for (int g = 0; g < 20; g++) {
                for (int i = 0; i < 100; i++) {
                    assertThat(all.get(g).get(i).get()).isEqualTo("g" + g + "-" + i + ":ok");
                }
            }
        }
        for (int g = 0; g < 20; g++) {
            String prefix = "g" + g + "-";
            long holding = transactions.stream().filter(t -> t.stream().anyMatch(i -> i.startsWith(prefix))).count();
            assertThat(holding).as("transactions holding group %d", g).isEqualTo(1);
        }
        assertThat(transactions).allMatch(t -> t.size() <= 500);
    }

    @Test
    void aGroupLargerThanABatchIsSplitIntoFullBatches() throws Exception {
        try (GroupCommitter<String, String> c = committer(100)) {
            List<CompletableFuture<String>> f = c.submitAll(group("big", 250));
            assertThat(f.get(249).get()).isEqualTo("big-249:ok");
        }
        assertThat(transactions).extracting(List::size).containsExactly(100, 100, 50);
    }

    @Test
    void aFailedTransactionIsRetriedItemByItem_soOnlyTheBadItemFails() throws Exception {
        List<CompletableFuture<String>> f;
        try (GroupCommitter<String, String> c = committer(500)) {
            f = c.submitAll(List.of("a", "bad", "c"));
            assertThat(f.get(0).get()).isEqualTo("a:ok");
            assertThat(f.get(2).get()).isEqualTo("c:ok");
            assertThatThrownBy(() -> f.get(1).get()).isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(SQLException.class).hasMessageContaining("bad");
        }
        assertThat(transactions).containsExactly(List.of("a"), List.of("c"));
    }

    @Test
    void aBatchThatCannotReachTheDatabaseFailsWhole_withoutOneTryPerItem() throws Exception {
        java.util.concurrent.atomic.AtomicInteger tries = new java.util.concurrent.atomic.AtomicInteger();
        List<CompletableFuture<String>> f;
        try (GroupCommitter<String, String> c = new GroupCommitter<>("test-commit", 500, items -> {
            tries.incrementAndGet();
            throw new SQLException("Connection to localhost:5432 refused", "08001");
        })) {
            f = c.submitAll(group("down", 20));
            for (CompletableFuture<String> one : f) {
                assertThatThrownBy(one::get).hasCauseInstanceOf(SQLException.class).hasMessageContaining("refused");
            }
        }
        assertThat(tries.get()).as("transactions tried for one batch of 20").isEqualTo(1);
    }

    @Test
    void connectionFailuresAreToldFromDataErrors() {
        assertThat(GroupCommitter.isConnectionFailure(new java.sql.SQLTransientConnectionException(
                "runbus - Connection is not available, request timed out after 3000ms."))).isTrue();
        assertThat(GroupCommitter.isConnectionFailure(new RuntimeException(
                new SQLException("terminating connection due to administrator command", "57P01")))).isTrue();
        assertThat(GroupCommitter.isConnectionFailure(new SQLException("An I/O error occurred", "08006"))).isTrue();
        assertThat(GroupCommitter.isConnectionFailure(new SQLException("duplicate key", "23505"))).isFalse();
        assertThat(GroupCommitter.isConnectionFailure(new SQLException("no state"))).isFalse();
    }

    @Test
    void afterCloseItemsAreCommittedOnTheCallersThread() throws Exception {
        GroupCommitter<String, String> c = committer(500);
        c.close();
        assertThat(c.commit("late")).isEqualTo("late:ok");
        assertThat(transactions).containsExactly(List.of("late"));
    }
}
