package dev.runbus.internal.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Key layout and name rules. Pure logic: no Redis needed. */
class KeysTest {

    private final Keys keys = new Keys("runbus");

    @Test
    void everyKeyOfATopicSharesOneHashTag() {
        assertThat(keys.stream("orders")).isEqualTo("runbus:{orders}:stream");
        assertThat(keys.deadLetters("orders")).isEqualTo("runbus:{orders}:dead");
        assertThat(keys.replayed("orders")).isEqualTo("runbus:{orders}:dead:replayed");
        assertThat(keys.heartbeats("orders", "billing")).isEqualTo("runbus:{orders}:heartbeats:billing");
        assertThat(keys.topics()).isEqualTo("runbus:topics");
    }

    @Test
    void badNamesAreRejectedWithTheNameInTheMessage() {
        assertThatThrownBy(() -> Keys.checkTopic("a{b")).hasMessageContaining("braces").hasMessageContaining("a{b");
        assertThatThrownBy(() -> Keys.checkTopic("")).hasMessageContaining("topic");
        assertThatThrownBy(() -> Keys.checkName("group", "a b")).hasMessageContaining("whitespace");
        assertThatThrownBy(() -> Keys.checkName("consumer", null)).hasMessageContaining("consumer");
        assertThatThrownBy(() -> Keys.checkName("consumer", "x".repeat(201))).hasMessageContaining("200");
        assertThat(Keys.checkTopic("orders.eu-1")).isEqualTo("orders.eu-1");
    }
}
