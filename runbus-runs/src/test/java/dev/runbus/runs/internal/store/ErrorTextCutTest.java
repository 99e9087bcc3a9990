package dev.runbus.runs.internal.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.runs.Run;
import org.junit.jupiter.api.Test;

/** Where {@link ErrorText} cuts: after removing control characters, never inside a character. */
class ErrorTextCutTest {

    @Test
    void shortTextKeepsNewlineAndTabAndLosesOtherControls() {
        assertThat(ErrorText.clean("a\u0000b\r\nc\td\u001b[0m\u007f\u0085")).isEqualTo("ab\nc\td[0m");
        assertThat(ErrorText.clean(null)).isNull();
    }

    @Test
    void exactlyTheLimitIsKept_oneMoreIsCut() {
        String max = "x".repeat(Run.MAX_ERROR_LENGTH);
        assertThat(ErrorText.clean(max)).isEqualTo(max);
        assertThat(ErrorText.clean(max + "y")).hasSize(Run.MAX_ERROR_LENGTH).endsWith("x…");
        // Removed characters do not count: a text that fits once cleaned is not cut.
        assertThat(ErrorText.clean(max + "\u0000\u0007")).isEqualTo(max);
    }

    @Test
    void aCutNeverSplitsASurrogatePair() {
        String emoji = "\uD83D\uDE00";
        String text = "x".repeat(Run.MAX_ERROR_LENGTH - 2) + emoji + "tail";
        String cut = ErrorText.clean(text);
        assertThat(cut).endsWith("x…").hasSize(Run.MAX_ERROR_LENGTH - 1);
        assertThat(cut.chars().filter(c -> Character.isSurrogate((char) c))).isEmpty();
    }
}
