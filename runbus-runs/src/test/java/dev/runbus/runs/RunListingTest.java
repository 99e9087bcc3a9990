package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.runs.testing.RunsTestSupport;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link Runs#list}: filters, newest-first order, and pages that neither skip nor repeat a run. */
class RunListingTest extends RunsTestSupport {

    static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    Runs runs;

    @BeforeEach
    void layer() {
        runs = runs(bus(), "w1", workerOptions().build());
    }

    @Test
    void pagesWalkEveryRunNewestFirst_evenAcrossRunsCreatedAtTheSameInstant() {
        // 25 runs at one instant (a group commit shares one now()), 10 a second earlier, 10 a second later.
        insert(25, T0, "pending", "u1", "s1");
        insert(10, T0.minusSeconds(1), "done", "u2", "s1");
        insert(10, T0.plusSeconds(1), "failed", "u1", "s2");
        List<Run> all = new ArrayList<>();
        RunPage page = runs.list(RunQuery.newest().withLimit(7));
        int pages = 1;
        while (true) {
            assertThat(page.runs()).hasSizeLessThanOrEqualTo(7);
            all.addAll(page.runs());
            if (page.next().isEmpty()) {
                break;
            }
            page = runs.list(RunQuery.newest().withLimit(7).after(page.next().get()));
            pages++;
        }
        assertThat(pages).isEqualTo(7); // 45 runs: six pages of 7, one of 3, and no empty page at the end
        assertThat(all).hasSize(45);
        assertThat(all.stream().map(Run::id).distinct()).hasSize(45);
        // PostgreSQL orders UUIDs by their bytes, as their text compares; UUID.compareTo compares signed longs.
        for (int i = 1; i < all.size(); i++) {
            Run a = all.get(i - 1);
            Run b = all.get(i);
            boolean ordered = a.createdAt().isAfter(b.createdAt())
                    || a.createdAt().equals(b.createdAt()) && a.id().toString().compareTo(b.id().toString()) > 0;
            assertThat(ordered).as("run %d after run %d", i, i - 1).isTrue();
        }
        assertThat(all.get(0).status()).isEqualTo(RunStatus.FAILED);
        assertThat(all.get(44).status()).isEqualTo(RunStatus.DONE);
    }

    @Test
    void filtersCombine() {
        insert(5, T0, "pending", "u1", "s1");
        insert(4, T0.minusSeconds(10), "done", "u1", "s2");
        insert(3, T0.minusSeconds(20), "done", "u2", "s2");
        assertThat(runs.list(RunQuery.newest().withStatus(RunStatus.DONE)).runs()).hasSize(7);
        assertThat(runs.list(RunQuery.newest().withUser("u1")).runs()).hasSize(9);
        assertThat(runs.list(RunQuery.newest().withSession("s2").withUser("u2")).runs()).hasSize(3)
                .allMatch(r -> r.userId().equals("u2") && r.sessionId().equals("s2"));
        assertThat(runs.list(RunQuery.newest().withStatus(RunStatus.FAILED)).runs()).isEmpty();
        // Both bounds are strict: the runs at T0 and at T0-20s are outside.
        assertThat(runs.list(RunQuery.newest().createdBetween(T0.minusSeconds(20), T0)).runs()).hasSize(4)
                .allMatch(r -> r.createdAt().equals(T0.minusSeconds(10)));
        assertThat(runs.list(RunQuery.newest().createdBetween(T0.minusSeconds(11), null).withUser("u1")).runs())
                .hasSize(9);
    }

    /** A listing shows neither input nor key, so it does not read them: an input may be 64 KiB a run. */
    @Test
    void aSubmittedRunIsListedWithWhatGetShows_butItsInputAndKey() {
        UUID id = runs.submit(new NewRun("s", "u", "hello", "key-1")).runId();
        RunPage page = runs.list(RunQuery.newest());
        Run got = runs.get(id).orElseThrow();
        assertThat(got.input()).isEqualTo("hello");
        assertThat(page.runs()).containsExactly(new Run(got.id(), "", got.sessionId(), got.userId(), "", got.status(),
                got.attempts(), got.error(), got.deadLetterId(), got.republished(), got.createdAt(), got.updatedAt(),
                got.nextAttemptAt()));
        assertThat(page.next()).isEmpty();
    }

    /**
     * Filters PostgreSQL would refuse (a NUL; a time outside timestamptz's range, which Java reads) or that no run can
     * match (an id longer than a run's) are refused before it is asked: they were RunStoreExceptions, the
     * HTTP API's 503.
     */
    @Test
    void filtersPostgresWouldRefuse_areRefusedBeforeItIsAsked() {
        assertThatThrownBy(() -> runs.list(RunQuery.newest().withUser("\u0000")))
                .isInstanceOf(IllegalArgumentException.class).isNotInstanceOf(RunStoreException.class)
                .hasMessageContaining("userId").hasMessageContaining("NUL");
        assertThatThrownBy(() -> runs.list(RunQuery.newest().withSession("s\u0000")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sessionId");
        assertThatThrownBy(() -> runs.list(RunQuery.newest().withUser("u".repeat(NewRun.MAX_ID_BYTES + 1))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2001 bytes");
        for (Instant t : List.of(Instant.parse("-4714-01-01T00:00:00Z"), Instant.parse("+300000-01-01T00:00:00Z"))) {
            assertThatThrownBy(() -> runs.list(RunQuery.newest().createdBetween(t, null)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("createdAfter");
            assertThatThrownBy(() -> runs.list(RunQuery.newest().createdBetween(null, t)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("createdBefore");
            assertThatThrownBy(() -> runs.list(RunQuery.newest().after(new RunPosition(t, UUID.randomUUID()))))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("after");
        }
        // The ends of the range are PostgreSQL's to answer, and they answer: nothing before year 1, all before 9999.
        insert(2, T0, "done", "u1", "s1");
        assertThat(runs.list(RunQuery.newest().createdBetween(null, RunQuery.EARLIEST)).runs()).isEmpty();
        assertThat(runs.list(RunQuery.newest().createdBetween(RunQuery.EARLIEST, RunQuery.LATEST)).runs()).hasSize(2);
        assertThat(runs.list(RunQuery.newest().after(new RunPosition(RunQuery.LATEST, UUID.randomUUID()))).runs())
                .hasSize(2);
    }

    @Test
    void aLimitOutsideOneTo200IsRefused() {
        assertThatThrownBy(() -> RunQuery.newest().withLimit(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RunQuery.newest().withLimit(RunQuery.MAX_LIMIT + 1))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private void insert(int n, Instant createdAt, String status, String user, String session) {
        execute("INSERT INTO " + schema + ".runs (id, idempotency_key, input_hash, session_id, user_id, input, status,"
                + " created_at) SELECT gen_random_uuid(), 'list-' || gen_random_uuid(), 'h', '" + session + "', '"
                + user + "', 'x', '" + status + "', '" + createdAt + "' FROM generate_series(1, " + n + ")");
    }
}
