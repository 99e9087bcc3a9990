package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.RedisTarget;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link Subscription#isReading()}: true from subscribe to close, for a plain and an ordered group; false after. */
class SubscriptionIsReadingTest {

    final RedisTarget target = RedisTarget.local();
    Bus bus;
    String prefix;

    @BeforeEach
    void connect() {
        prefix = "rbreading-" + UUID.randomUUID().toString().substring(0, 8);
        bus = Bus.connect(BusConfig.builder(target.uri()).keyPrefix(prefix).build());
    }

    @AfterEach
    void close() {
        bus.close();
        target.deleteKeys(prefix);
    }

    @Test
    void readingUntilClosed() {
        Subscription plain = bus.subscribe("t", "g", "c1", d -> { }, SubscribeOptions.defaults());
        Subscription ordered = bus.subscribe("o", "g", "c1", d -> { },
                SubscribeOptions.builder().ordered(true).build());
        assertThat(plain.isReading()).isTrue();
        assertThat(ordered.isReading()).isTrue();
        plain.close();
        ordered.close();
        assertThat(plain.isReading()).isFalse();
        assertThat(ordered.isReading()).isFalse();
    }
}
