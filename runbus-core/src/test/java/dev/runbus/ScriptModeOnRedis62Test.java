package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.testkit.OwnRedis;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/** Redis 6.2 has no functions: AUTO sends the scripts with EVAL there, FUNCTIONS is refused at connect. */
class ScriptModeOnRedis62Test {

    @Test
    void autoSendsScriptsAndFunctionsIsRefusedSayingWhy() {
        try (OwnRedis redis = OwnRedis.embedded62()) {
            assertThatThrownBy(() -> Bus.connect(BusConfig.builder(redis.uri()).scriptMode(ScriptMode.FUNCTIONS)
                    .build())).isInstanceOf(RunbusException.class)
                    .hasMessageContaining("scriptMode FUNCTIONS needs Redis 7.0 or later")
                    .hasMessageContaining("use AUTO");
            assertThat(ScriptLibrary.load(BusConfig.builder(redis.uri()).build()).functions()).isFalse();

            try (Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix("test-62").build())) {
                Set<String> handled = ConcurrentHashMap.newKeySet();
                bus.subscribe("t", "g", "c", d -> handled.add(d.message().type()),
                        SubscribeOptions.builder().blockTime(Duration.ofMillis(200)).build());
                bus.publisher().publish("t", Message.of("one", "1".getBytes(StandardCharsets.UTF_8)));
                Wait.until("handled", Duration.ofSeconds(10), () -> handled.contains("one"));
            }
            assertThat(redis.redis().info("commandstats")).contains("cmdstat_evalsha");
        }
    }
}
