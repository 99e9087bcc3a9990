package dev.runbus.internal.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.RunbusException;
import org.junit.jupiter.api.Test;

/** What the bus takes a server to have, from its {@code INFO server} and the {@code commandsUpTo} cap. */
class RedisVersionTest {

    private static final String REDIS_863 = "# Server\r\nredis_version:8.6.3\r\nredis_mode:standalone\r\n";
    private static final String VALKEY_801 = "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\n"
            + "valkey_version:8.0.1\r\n";

    @Test
    void eachServerGetsWhatItsVersionHas() {
        RedisVersion redis8 = RedisVersion.parse(REDIS_863, null);
        assertThat(redis8.hasFunctions()).isTrue();
        assertThat(redis8.hasAckedTrim()).isTrue();
        assertThat(redis8.hasIdempotentAppends()).isTrue();
        RedisVersion valkey = RedisVersion.parse(VALKEY_801, null);
        assertThat(valkey.toString()).isEqualTo("Valkey 8.0.1");
        assertThat(valkey.hasFunctions()).isTrue();
        assertThat(valkey.hasAckedTrim()).isFalse();
        assertThat(valkey.hasIdempotentAppends()).isFalse();
    }

    @Test
    void aCapOlderThanTheServer_holdsBackWhatCameAfterIt() {
        RedisVersion at82 = RedisVersion.parse(REDIS_863, "8.2");
        assertThat(at82.hasAckedTrim()).isTrue();
        assertThat(at82.hasIdempotentAppends()).isFalse();
        RedisVersion at80 = RedisVersion.parse(REDIS_863, " 8.0 ");
        assertThat(at80.hasFunctions()).isTrue();
        assertThat(at80.hasAckedTrim()).isFalse();
        assertThat(at80.hasIdempotentAppends()).isFalse();
        assertThat(RedisVersion.parse(REDIS_863, "6.2").hasFunctions()).isFalse();
        assertThat(at80.toString()).as("messages name the server's own version").isEqualTo("Redis 8.6.3");
        assertThat(at80.redisCompatible()).isEqualTo("8.0");
    }

    @Test
    void aCapNewerThanTheServer_changesNothing_andAnUnknownServerStaysUnknown() {
        assertThat(RedisVersion.parse(VALKEY_801, "8.6")).isEqualTo(RedisVersion.parse(VALKEY_801, null));
        assertThat(RedisVersion.parse(REDIS_863, "9")).isEqualTo(RedisVersion.parse(REDIS_863, ""));
        RedisVersion unknown = RedisVersion.parse("# Server\r\n", "8.6");
        assertThat(unknown).isEqualTo(RedisVersion.UNKNOWN);
        assertThat(unknown.hasIdempotentAppends()).isFalse();
    }

    @Test
    void aCapThatIsNotAVersion_isRefusedByName() {
        assertThatThrownBy(() -> RedisVersion.parse(REDIS_863, "eight"))
                .isInstanceOf(RunbusException.class)
                .hasMessage("runbus.redis.commandsUpTo must be a Redis version such as 8.0, not 'eight'");
    }
}
