package dev.runbus.internal.scripts;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.internal.redis.RedisVersion;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which servers the connect-time warning names: those older than the fixed release of their line. */
class LuaFixesTest {

    @ParameterizedTest(name = "{0} {1}: {2}")
    @CsvSource(delimiter = '|', value = {
            "Redis  | 6.2.19 | upgrade to 6.2.20",
            "Redis  | 6.2.20 | ",
            "Redis  | 7.0.15 | upgrade to a fixed release of a newer line (7.2.11, 7.4.6, 8.0.4, 8.2.2; the 7.0 line gets no fix)",
            "Redis  | 7.2.6  | upgrade to 7.2.11",
            "Redis  | 7.2.11 | ",
            "Redis  | 7.4.5  | upgrade to 7.4.6",
            "Redis  | 8.0.3  | upgrade to 8.0.4",
            "Redis  | 8.2.1  | upgrade to 8.2.2",
            "Redis  | 8.2.2  | ",
            "Redis  | 8.4.0  | ",
            "Valkey | 7.2.10 | upgrade to 7.2.11",
            "Valkey | 8.0.1  | upgrade to 8.0.6",
            "Valkey | 8.0.6  | ",
            "Valkey | 8.1.3  | upgrade to 8.1.4",
            "Valkey | 8.1.4  | ",
            "Valkey | 9.0.0  | "})
    void warnsBelowTheFixedReleaseOfTheLine(String product, String version, String advice) {
        Optional<String> warning = LuaFixes.warning(new RedisVersion(product, version, "7.2.4"));
        if (advice == null) {
            assertThat(warning).isEmpty();
        } else {
            assertThat(warning).get().asString().startsWith(product + " " + version + " is older than the release")
                    .contains("CVE-2025-49844").contains(advice + ", unless your distribution backported the fixes");
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "redis_version:7.0.15              | Redis 7.0.15  | true",
            "redis_version:6.2.14              | Redis 6.2.14  | false",
            "redis_version:7.2.4\\nserver_name:valkey\\nvalkey_version:8.0.1 | Valkey 8.0.1 | true"})
    void readsTheVersionFromInfo(String info, String shown, boolean functions) {
        RedisVersion v = RedisVersion.parse("# Server\r\n" + info.replace("\\n", "\r\n") + "\r\nredis_mode:standalone\r\n");
        assertThat(v).hasToString(shown);
        assertThat(v.hasFunctions()).isEqualTo(functions);
    }

    @ParameterizedTest
    @CsvSource({"redis_mode:standalone"})
    void aServerThatDoesNotSayGetsNoWarning(String info) {
        RedisVersion v = RedisVersion.parse(info);
        assertThat(LuaFixes.warning(v)).isEmpty();
        assertThat(v.hasFunctions()).isTrue();
    }
}
