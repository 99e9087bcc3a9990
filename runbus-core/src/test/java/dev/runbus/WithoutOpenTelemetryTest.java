package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testing.WithoutOpenTelemetry;
import dev.runbus.testkit.ChildJvm;
import dev.runbus.testkit.RedisTarget;
import java.io.File;
import java.time.Duration;
import java.util.Arrays;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * OpenTelemetry is an optional dependency: a bus on a classpath without it publishes and handles as before,
 * because no class that refers to it is loaded while tracing is off (the default).
 */
class WithoutOpenTelemetryTest {

    @Test
    void theBusWorksWithoutOpenTelemetryOnTheClasspath() throws Exception {
        String classpath = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(entry -> !entry.contains("opentelemetry")).collect(Collectors.joining(File.pathSeparator));
        assertThat(classpath).isNotEqualTo(System.getProperty("java.class.path"));
        String prefix = "test-no-otel-" + UUID.randomUUID();
        try (ChildJvm child = ChildJvm.start(classpath, WithoutOpenTelemetry.class, RedisTarget.local().uri(),
                prefix)) {
            String line = child.awaitLine("OK", Duration.ofSeconds(60));
            assertThat(line).isEqualTo("OK");
        } finally {
            RedisTarget.local().deleteKeys(prefix);
        }
    }
}
