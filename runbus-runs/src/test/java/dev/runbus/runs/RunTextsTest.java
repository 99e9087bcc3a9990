package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The texts of a run as PostgreSQL stores and indexes them: an id longer than the listing's indexes hold is refused
 * by {@link NewRun} (it used to fail its insert, and so its whole group commit, again and again), a text PostgreSQL
 * would change is refused (a lone surrogate was stored as {@code ?}, so two ids became one), and a session index
 * added to a table that already holds longer ids builds.
 */
class RunTextsTest extends RunsTestSupport {

    private static final SecureRandom RANDOM = new SecureRandom();

    @Test
    void anIdLongerThanTheIndexesHold_isRefusedNamingIt_andNothingIsWritten() {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        // 3000 bytes that do not compress: more than a btree entry holds (about 2,700).
        String user = incompressible(3000);
        assertThatThrownBy(() -> runs.submit(NewRun.of("s", user, "x")))
                .isInstanceOfSatisfying(InvalidRunException.class, e -> {
                    assertThat(e.field()).isEqualTo("userId");
                    assertThat(e.problem()).isEqualTo("has 3000 bytes in UTF-8, more than the 2000 allowed");
                });
        assertThatThrownBy(() -> runs.submit(NewRun.of(incompressible(2001), "u", "x")))
                .isInstanceOfSatisfying(InvalidRunException.class, e -> assertThat(e.field()).isEqualTo("sessionId"));
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs")).isZero();
        assertThat(redis.redis().xlen(stream())).isZero();
    }

    /** Bytes, not characters: 500 characters of four bytes are the most an id may have, and they are indexed. */
    @Test
    void theLongestIdsAreStoredAndListed_inFourByteCharactersToo() {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        StringBuilder b = new StringBuilder();
        while (b.length() < 1000) {
            b.appendCodePoint(0x1F300 + RANDOM.nextInt(0x600)); // symbols and emoji: four bytes each in UTF-8
        }
        String user = b.toString();
        String session = incompressible(NewRun.MAX_ID_BYTES);
        assertThatThrownBy(() -> NewRun.of("s", user + "x", "x")).isInstanceOf(InvalidRunException.class)
                .hasMessage("userId has 2001 bytes in UTF-8, more than the 2000 allowed");

        UUID id = runs.submit(NewRun.of(session, user, "x")).runId();

        assertThat(runs.list(RunQuery.newest().withUser(user)).runs()).extracting(Run::id).containsExactly(id);
        assertThat(runs.list(RunQuery.newest().withSession(session)).runs()).extracting(Run::id).containsExactly(id);
    }

    @Test
    void aLoneSurrogateInAnyText_isRefusedNamingIt_forItWouldBeStoredAsAQuestionMark() {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        assertRefused(() -> NewRun.of("s\ud800", "u", "x"), "sessionId");
        assertRefused(() -> NewRun.of("s", "u\udfff", "x"), "userId");
        assertRefused(() -> NewRun.of("s", "u", "{\"q\": \"\ud83d\"}"), "input");
        assertRefused(() -> new NewRun("s", "u", "x", "key-\udbff"), "idempotencyKey");
        assertRefused(() -> NewRun.of("s", "u", "x\u0000"), "input");
        // Whole pairs are characters like any other.
        assertThat(runs.submit(new NewRun("s\ud83d\ude00", "u", "x", "key-\ud83d\ude00")).created()).isTrue();
        assertThat(runs.submit(new NewRun("s\ud83d\ude01", "u", "x", "key-\ud83d\ude01")).created()).isTrue();
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE session_id LIKE '%?%'")).isZero();
    }

    /**
     * V009 indexes sessions on a table whose session ids had no bound: a database holding a longer one (here 3000
     * bytes that do not compress) still migrates, and that run can still change status.
     */
    @Test
    void theSessionIndexBuildsOnATableThatHoldsLongerSessionIds() throws Exception {
        runs(bus(), "w1", workerOptions().build()).close();
        // The schema as it was before V009, with a run written then.
        execute("DROP INDEX " + schema + ".runs_session_created_idx");
        execute("DELETE FROM " + schema + ".schema_migrations WHERE version = 9");
        UUID id = UUID.randomUUID();
        try (Connection c = TestDatabase.pool().getConnection(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO " + schema + ".runs (id, idempotency_key, input_hash, session_id, user_id, input)"
                        + " VALUES (?, ?, 'h', ?, 'u', 'x')")) {
            ps.setObject(1, id);
            ps.setString(2, "old-" + id);
            ps.setString(3, incompressible(3000));
            ps.executeUpdate();
        }

        assertThat(RunsSchema.migrate(TestDatabase.pool(), schema, false)).containsExactly("V009__session_listing.sql");

        execute("UPDATE " + schema + ".runs SET status = 'running' WHERE id = '" + id + "'");
        Runs runs = runs(bus(), "w1", workerOptions().build());
        assertThat(runs.get(id).orElseThrow().status()).isEqualTo(RunStatus.RUNNING);
        assertThat(runs.list(RunQuery.newest()).runs()).extracting(Run::id).containsExactly(id);
    }

    private static void assertRefused(Runnable make, String field) {
        assertThatThrownBy(make::run).isInstanceOfSatisfying(InvalidRunException.class,
                e -> assertThat(e.field()).isEqualTo(field));
    }

    /** {@code bytes} random letters and digits: no run of them repeats often enough for PostgreSQL to compress. */
    static String incompressible(int bytes) {
        String alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        StringBuilder b = new StringBuilder(bytes);
        for (int i = 0; i < bytes; i++) {
            b.append(alphabet.charAt(RANDOM.nextInt(alphabet.length())));
        }
        return b.toString();
    }
}
