package dev.runbus.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The dashboard's sessions on a clock the test moves (our own logic, no server): how long one lives, and how many
 * one token, and all tokens, may hold.
 */
class BrowserSessionsTest {

    final AtomicLong now = new AtomicLong(1_000_000_000L);
    final BrowserSessions sessions = new BrowserSessions(ApiTokens.parse(List.of(), "test"), null, false,
            RateBuckets.perMinute(0, now::get, 10), now::get);

    @Test
    void aSessionInUseEndsAtItsLifetimeAndAnUnusedOneAfterItsIdleTime() {
        String used = sessions.open(Caller.token("operator", Set.of(Scope.READ)));
        String unused = sessions.open(Caller.token("viewer", Set.of(Scope.READ)));
        Duration step = BrowserSessions.IDLE.minusHours(1);
        // Used every 7 hours: never idle for 8, but the sign-in is 28 hours old at the last step.
        for (int i = 1; i <= 3; i++) {
            advance(step);
            assertThat(sessions.lookup(used)).as("after " + i * 7 + " h").isPresent();
        }
        assertThat(sessions.lookup(unused)).as("unused for 21 h").isEmpty();
        advance(step);
        assertThat(sessions.lookup(used)).as("28 h after its sign-in").isEmpty();
        assertThat(sessions.size()).isZero();
    }

    @Test
    void oneTokenHoldsAtMostItsShareAndItsOldestSessionGoesFirst() {
        String other = sessions.open(Caller.token("viewer", Set.of(Scope.READ)));
        List<String> mine = new ArrayList<>();
        for (int i = 0; i < BrowserSessions.MAX_PER_TOKEN + 5; i++) {
            advance(Duration.ofSeconds(1));
            mine.add(sessions.open(Caller.token("operator", Set.of(Scope.READ))));
        }
        assertThat(sessions.size("operator")).isEqualTo(BrowserSessions.MAX_PER_TOKEN);
        assertThat(mine.subList(0, 5)).allSatisfy(id -> assertThat(sessions.lookup(id)).isEmpty());
        assertThat(mine.subList(5, mine.size())).allSatisfy(id -> assertThat(sessions.lookup(id)).isPresent());
        assertThat(sessions.lookup(other)).as("another token's session").isPresent();
    }

    @Test
    void pastTheOverallCapTheLeastRecentlyUsedSessionGoesFirst() {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < BrowserSessions.MAX_SESSIONS; i++) {
            advance(Duration.ofMillis(1));
            ids.add(sessions.open(Caller.token("token-" + i, Set.of(Scope.READ))));
        }
        advance(Duration.ofMillis(1));
        assertThat(sessions.lookup(ids.get(0))).isPresent(); // used now: no longer the least recently used
        advance(Duration.ofMillis(1));
        sessions.open(Caller.token("late", Set.of(Scope.READ)));
        assertThat(sessions.size()).isEqualTo(BrowserSessions.MAX_SESSIONS);
        assertThat(sessions.lookup(ids.get(0))).isPresent();
        assertThat(sessions.lookup(ids.get(1))).isEmpty();
    }

    private void advance(Duration d) {
        now.addAndGet(d.toNanos());
    }
}
