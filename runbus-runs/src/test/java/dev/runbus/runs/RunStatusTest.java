package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.runs.internal.store.IdempotencyKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The legal transitions, as a table. Pure logic: no database needed. */
class RunStatusTest {

    @ParameterizedTest(name = "{0} -> {1}: {2}")
    @CsvSource({
        "PENDING, RUNNING, true", "PENDING, FAILED, false", "PENDING, DONE, false", "PENDING, PENDING, false",
        "RUNNING, RUNNING, true", "RUNNING, DONE, true", "RUNNING, FAILED, true", "RUNNING, PENDING, false",
        "DONE, PENDING, false", "DONE, RUNNING, false", "DONE, FAILED, false", "DONE, DONE, false",
        "FAILED, PENDING, true", "FAILED, RUNNING, false", "FAILED, DONE, false", "FAILED, FAILED, false",
        "PENDING, CANCELLED, true", "RUNNING, CANCELLED, false", "DONE, CANCELLED, false", "FAILED, CANCELLED, false",
        "CANCELLED, PENDING, false", "CANCELLED, RUNNING, false", "CANCELLED, DONE, false", "CANCELLED, FAILED, false",
        "CANCELLED, CANCELLED, false",
        "RUNNING, CANCELLING, true", "CANCELLING, CANCELLED, true", "CANCELLING, DONE, false",
        "CANCELLING, FAILED, false", "CANCELLING, RUNNING, false", "PENDING, CANCELLING, false",
        "CANCELLED, CANCELLING, false", "DONE, CANCELLING, false",
    })
    void transitions(RunStatus from, RunStatus to, boolean legal) {
        assertThat(from.canMoveTo(to)).isEqualTo(legal);
    }

    @Test
    void sourcesAndSqlNames() {
        assertThat(RunStatus.sourcesOf(RunStatus.PENDING)).containsExactly(RunStatus.FAILED);
        assertThat(RunStatus.sourcesOf(RunStatus.DONE)).containsExactly(RunStatus.RUNNING);
        assertThat(RunStatus.sourcesOf(RunStatus.CANCELLED)).containsExactly(RunStatus.PENDING, RunStatus.CANCELLING);
        assertThat(RunStatus.sourcesOf(RunStatus.RUNNING)).containsExactly(RunStatus.PENDING, RunStatus.RUNNING);
        assertThat(RunStatus.fromSql("running")).isEqualTo(RunStatus.RUNNING);
        assertThat(RunStatus.DONE.sql()).isEqualTo("done");
    }

    @Test
    void derivedKeysDependOnEveryPartAndTheSecond() {
        String k = IdempotencyKeys.derive("s", "u", "in", 100);
        assertThat(IdempotencyKeys.derive("s", "u", "in", 100)).isEqualTo(k);
        assertThat(IdempotencyKeys.derive("s", "u", "in", 101)).isNotEqualTo(k);
        assertThat(IdempotencyKeys.derive("s", "u", "in2", 100)).isNotEqualTo(k);
        // Parts are length-prefixed: moving a character from one part to the next changes the key.
        assertThat(IdempotencyKeys.bodyHash("ab", "c", "x")).isNotEqualTo(IdempotencyKeys.bodyHash("a", "bc", "x"));
    }
}
