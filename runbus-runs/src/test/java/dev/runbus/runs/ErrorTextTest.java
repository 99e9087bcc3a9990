package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.RetryPolicy;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A handler's failure text is stored bounded and printable: at most {@link Run#MAX_ERROR_LENGTH} characters,
 * control characters other than newline and tab removed, whatever the exception said (a NUL included, which
 * PostgreSQL's text type refuses). Both places that store it: a failed attempt with attempts left, and the run
 * failed from its dead letter.
 */
class ErrorTextTest extends RunsTestSupport {

    static final Duration WAIT = Duration.ofSeconds(30);
    /** Escape sequences, a NUL, a bell, a carriage return; a newline and a tab; far too long. */
    static final String NOISE = "\u001b[31mred\u001b[0m\u0000\u0007\r\nline two\tcolumn " + "x".repeat(10_000);

    static final RunHandler NOISY = run -> {
        throw new IllegalStateException(NOISE);
    };

    @Test
    void aFailedAttemptsTextIsStoredCappedAndWithoutControlCharacters() {
        // One attempt fails, the next is an hour away: the run keeps the first failure's text.
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().build())
                .retryPolicy(RetryPolicy.fixed(Duration.ofHours(1))).build());
        runs.startWorker(NOISY);
        UUID id = runs.submit(NewRun.of("s", "u", "noisy")).runId();
        Run failing = Wait.until("failure recorded", WAIT, () -> runs.get(id).orElseThrow(),
                r -> r.error().isPresent());
        assertClean(failing.error().orElseThrow());
        assertClean(storedError(id));
    }

    @Test
    void aFailedRunsTextIsStoredCappedAndWithoutControlCharacters() {
        Runs runs = runs(bus(), "w1", workerOptions().maxDeliveries(1).build());
        runs.startWorker(NOISY);
        UUID id = runs.submit(NewRun.of("s", "u", "noisy")).runId();
        Run failed = Wait.until("failed", WAIT, () -> runs.get(id).orElseThrow(),
                r -> r.status() == RunStatus.FAILED);
        assertClean(failed.error().orElseThrow());
        assertClean(storedError(id));
    }

    private String storedError(UUID id) {
        return TestDatabase.string("SELECT error FROM " + schema + ".runs WHERE id = '" + id + "'");
    }

    static void assertClean(String error) {
        assertThat(error.length()).isLessThanOrEqualTo(Run.MAX_ERROR_LENGTH);
        assertThat(error).startsWith("java.lang.IllegalStateException: [31mred[0m\nline two\tcolumn xxx");
        assertThat(error.chars().filter(c -> Character.isISOControl(c) && c != '\n' && c != '\t')).isEmpty();
    }
}
