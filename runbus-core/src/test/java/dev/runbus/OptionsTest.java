package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Configuration is validated when built, with messages that name the option. No Redis needed. */
class OptionsTest {

    @Test
    void subscribeDefaults() {
        SubscribeOptions o = SubscribeOptions.defaults();
        assertThat(o.concurrency()).isEqualTo(SubscribeOptions.DEFAULT_CONCURRENCY);
        assertThat(o.batchSize()).isEqualTo(100);
        assertThat(o.maxDeliveries()).isEqualTo(3);
        assertThat(o.minIdle()).isEqualTo(Duration.ofSeconds(30));
        assertThat(o.keepAliveInterval()).isEqualTo(Duration.ofSeconds(10));
        assertThat(o.ackMode()).isEqualTo(AckMode.AFTER_WORK);
        assertThat(o.executor()).isNull();
    }

    @Test
    void aKeyPrefixWithAGlobCharacterOrAColonIsRefused() {
        // SCAN's and ACL's patterns are globs over whole keys: "a*" would reach "ab:...", "a:b" reaches "a:b:..."
        // as well as the keys of prefix "a" that start with "b".
        for (String c : new String[] {"*", "?", "[", "]", "\\", ":"}) {
            String prefix = "app" + c + "x";
            assertThatThrownBy(() -> BusConfig.builder("redis://x").keyPrefix(prefix).build())
                    .as(prefix).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("keyPrefix").hasMessageContaining("'" + prefix + "'")
                    .hasMessageContaining("'" + c + "'");
            // Refused before Redis is asked: the URL names no server.
            assertThatThrownBy(() -> KeyPrefix.deleteAll("redis://127.0.0.1:1", prefix))
                    .as(prefix).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'" + prefix + "'").hasMessageContaining("'" + c + "'");
        }
        assertThat(BusConfig.builder("redis://x").keyPrefix("my-app_1.prod").build().keyPrefix())
                .isEqualTo("my-app_1.prod");
    }

    @Test
    void subscribeValidation() {
        assertThatThrownBy(() -> SubscribeOptions.builder().concurrency(0).build()).hasMessageContaining("concurrency");
        assertThatThrownBy(() -> SubscribeOptions.builder().batchSize(0).build()).hasMessageContaining("batchSize");
        assertThatThrownBy(() -> SubscribeOptions.builder().maxDeliveries(0).build())
                .hasMessageContaining("maxDeliveries");
        assertThatThrownBy(() -> SubscribeOptions.builder().minIdle(Duration.ZERO).build())
                .hasMessageContaining("minIdle");
        assertThatThrownBy(() -> SubscribeOptions.builder().minIdle(Duration.ofSeconds(3))
                .keepAliveInterval(Duration.ofSeconds(3)).build()).hasMessageContaining("keepAliveInterval");
        assertThat(SubscribeOptions.defaults().toBuilder().concurrency(2).build().concurrency()).isEqualTo(2);
    }

    @Test
    void busConfigValidation() {
        assertThatThrownBy(() -> BusConfig.builder(" ").build()).hasMessageContaining("redisUri");
        // A URL runbus cannot read is refused when the configuration is built, not at connect, password masked.
        assertThatThrownBy(() -> BusConfig.builder("redis://u:p@ss@127.0.0.1").build())
                .hasMessageContaining("percent-encode").hasMessageNotContaining("p@ss");
        assertThatThrownBy(() -> BusConfig.builder("127.0.0.1:6379").build())
                .hasMessageContaining("not a Redis URL runbus reads");
        assertThatThrownBy(() -> BusConfig.builder("redis://x").keyPrefix("a{b}").build())
                .hasMessageContaining("keyPrefix");
        assertThatThrownBy(() -> BusConfig.builder("redis://x").heartbeatInterval(Duration.ofSeconds(10))
                .consumerDeadAfter(Duration.ofSeconds(20)).build()).hasMessageContaining("consumerDeadAfter");
        assertThat(BusConfig.builder("redis://x").build().keyPrefix()).isEqualTo("runbus");
    }

    @Test
    void scriptModeDefaultsToAutoAndIsRequired() {
        BusConfig d = BusConfig.builder("redis://x").build();
        assertThat(d.scriptMode()).isEqualTo(ScriptMode.AUTO).isEqualTo(BusConfig.DEFAULT_SCRIPT_MODE);
        assertThat(d.toString()).contains("scriptMode=AUTO");
        assertThat(BusConfig.builder("redis://x").scriptMode(ScriptMode.EVAL).build().scriptMode())
                .isEqualTo(ScriptMode.EVAL);
        assertThatThrownBy(() -> BusConfig.builder("redis://x").scriptMode(null).build())
                .hasMessageContaining("scriptMode");
    }

    @Test
    void retentionDefaultsAndValidation() {
        BusConfig d = BusConfig.builder("redis://x").build();
        assertThat(d.retention()).isTrue();
        assertThat(d.retentionAge()).isEqualTo(Duration.ofHours(1));
        assertThat(d.retentionInterval()).isEqualTo(Duration.ofSeconds(30));
        assertThat(d.deadLetterRetention()).isNull();
        assertThat(BusConfig.builder("redis://x").retentionAge(Duration.ZERO).build().retentionAge()).isZero();
        assertThatThrownBy(() -> BusConfig.builder("redis://x").retentionAge(Duration.ofSeconds(-1)).build())
                .hasMessageContaining("retentionAge");
        assertThatThrownBy(() -> BusConfig.builder("redis://x").retentionInterval(Duration.ZERO).build())
                .hasMessageContaining("retentionInterval");
        assertThatThrownBy(() -> BusConfig.builder("redis://x").deadLetterRetention(Duration.ZERO).build())
                .hasMessageContaining("deadLetterRetention");
    }

    @Test
    void messageValidationAndCopies() {
        assertThatThrownBy(() -> Message.builder("t", new byte[0]).header("bad name", "v"))
                .hasMessageContaining("bad name");
        assertThatThrownBy(() -> Message.builder("t", new byte[0]).id("").build()).hasMessageContaining("id");
        byte[] payload = {1, 2};
        Message m = Message.of("t", payload);
        payload[0] = 9;
        assertThat(m.payload()).containsExactly(1, 2);
        m.payload()[1] = 9;
        assertThat(m.payload()).containsExactly(1, 2);
    }

    @Test
    void connectingToNothingFailsFastWithTheAddress() {
        assertThatThrownBy(() -> Bus.connect(BusConfig.builder("redis://127.0.0.1:1")
                .commandTimeout(Duration.ofSeconds(2)).build()))
                .isInstanceOf(RunbusException.class).hasMessageContaining("127.0.0.1:1");
    }
}
