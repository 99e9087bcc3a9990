package dev.runbus.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Outcome;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The one decision after a handler call, as a table. Pure logic: no Redis needed. */
class OutcomePolicyTest {

    private final OutcomePolicy policy = new OutcomePolicy(3);

    @ParameterizedTest(name = "delivery {0}, failed={1} -> {2}")
    @CsvSource({
        "1, false, ACK",
        "3, false, ACK",
        "7, false, ACK",
        "1, true, RETRY",
        "2, true, RETRY",
        "3, true, DEAD_LETTER",
        "4, true, DEAD_LETTER",
    })
    void afterHandler(long deliveries, boolean failed, Outcome expected) {
        assertThat(policy.afterHandler(deliveries, failed ? new RuntimeException("x") : null)).isEqualTo(expected);
    }

    /** maxDeliveries 3: the fourth delivery runs alone, the fifth finds it abandoned. */
    @ParameterizedTest(name = "delivery {0} alone={1} abandoned={2}")
    @CsvSource({"1, false, false", "3, false, false", "4, true, false", "5, true, true", "10, true, true"})
    void onceMoreAloneThenAbandoned(long deliveries, boolean alone, boolean abandoned) {
        assertThat(policy.runsAlone(deliveries)).isEqualTo(alone);
        assertThat(policy.isAbandoned(deliveries)).isEqualTo(abandoned);
    }

    @Test
    void reasons() {
        assertThat(OutcomePolicy.abandonedReason(4, "worker-2")).isEqualTo("abandoned 3 times, last owner worker-2");
        assertThat(OutcomePolicy.abandonedReason(4, "")).isEqualTo("abandoned 3 times, last owner unknown");
        assertThat(OutcomePolicy.failureReason(new IllegalStateException("bad input")))
                .isEqualTo("java.lang.IllegalStateException: bad input");
        assertThat(OutcomePolicy.failureReason(new NullPointerException())).isEqualTo("java.lang.NullPointerException");
        String huge = OutcomePolicy.failureReason(new RuntimeException("x".repeat(5000)));
        assertThat(huge).hasSize(OutcomePolicy.MAX_REASON_LENGTH).endsWith("…");
    }

    @Test
    void aReasonKeepsNoControlCharacterButNewlineAndTab_andIsNeverCutInsideACharacter() {
        String escape = OutcomePolicy.failureReason(new IllegalStateException("bad \u001b[2Jinput\u0000\r\nline\ttab"));
        assertThat(escape).isEqualTo("java.lang.IllegalStateException: bad [2Jinput\nline\ttab");
        String prefix = "java.lang.RuntimeException: ";
        String emoji = OutcomePolicy.failureReason(new RuntimeException(
                "x".repeat(OutcomePolicy.MAX_REASON_LENGTH - prefix.length() - 2) + "\uD83D\uDE00".repeat(10)));
        assertThat(emoji).endsWith("…").hasSizeLessThanOrEqualTo(OutcomePolicy.MAX_REASON_LENGTH);
        assertThat(Character.isHighSurrogate(emoji.charAt(emoji.length() - 2))).isFalse();
    }
}
