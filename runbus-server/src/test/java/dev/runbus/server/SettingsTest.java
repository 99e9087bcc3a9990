package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.FlowFairness;
import dev.runbus.FlowRate;
import dev.runbus.RetryPolicy;
import dev.runbus.SubscribeOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Precedence, validation and masking of the configuration. No servers needed. */
class SettingsTest {

    @Test
    void flagsOverEnvironmentOverFileOverDefaults(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("runbus.properties");
        Files.writeString(file, "port=7000\ntopic=from-file\nschema=file_schema\n");
        Settings s = Settings.resolve(Map.of(Setting.PORT, "9000"),
                Map.of("RUNBUS_PORT", "8000", "RUNBUS_TOPIC", "from-env"), file);
        assertThat(s.get(Setting.PORT)).isEqualTo("9000");
        assertThat(s.source(Setting.PORT)).isEqualTo(Settings.Source.FLAG);
        assertThat(s.get(Setting.TOPIC)).isEqualTo("from-env");
        assertThat(s.source(Setting.TOPIC)).isEqualTo(Settings.Source.ENV);
        assertThat(s.get(Setting.SCHEMA)).isEqualTo("file_schema");
        assertThat(s.source(Setting.SCHEMA)).isEqualTo(Settings.Source.FILE);
        assertThat(s.get(Setting.GROUP)).isEqualTo("run-workers");
        assertThat(s.source(Setting.GROUP)).isEqualTo(Settings.Source.DEFAULT);
    }

    @Test
    void aKeyPrefixWithAGlobCharacterIsRefusedBeforeAnythingStarts() {
        Settings s = Settings.resolve(Map.of(Setting.KEY_PREFIX, "shop*"), Map.of(), null);
        assertThatThrownBy(s::validate).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--key-prefix").hasMessageContaining("'shop*'").hasMessageContaining("'*'");
        Cli c = Cli.run("serve", "--key-prefix", "a:b", "--port", "0");
        assertThat(c.exitCode).as(c.err).isEqualTo(2);
        assertThat(c.err).contains("--key-prefix").contains("'a:b'").contains("':'");
    }

    @Test
    void emptyEnvironmentVariablesCountAsUnset(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("runbus.properties");
        Files.writeString(file, "database-url=jdbc:postgresql://db:5432/app\n");
        Settings s = Settings.resolve(Map.of(), Map.of("RUNBUS_DATABASE_URL", ""), file);
        assertThat(s.get(Setting.DATABASE_URL)).isEqualTo("jdbc:postgresql://db:5432/app");
        assertThat(s.source(Setting.DATABASE_URL)).isEqualTo(Settings.Source.FILE);
    }

    @Test
    void orderedAndPartitionsReachTheRunsConfigFromTheEnvironment() {
        Settings defaults = Settings.resolve(Map.of(), Map.of(), null);
        assertThat(defaults.bool(Setting.ORDERED)).isFalse();
        assertThat(defaults.integer(Setting.PARTITIONS, 1)).isEqualTo(1);
        assertThat(RunsFactory.config(defaults, "c").ordered()).isFalse();
        Settings s = Settings.resolve(Map.of(), Map.of("RUNBUS_ORDERED", "TRUE", "RUNBUS_PARTITIONS", "4"), null);
        assertThat(s.bool(Setting.ORDERED)).isTrue();
        assertThat(s.integer(Setting.PARTITIONS, 1)).isEqualTo(4);
        assertThat(RunsFactory.config(s, "c").ordered()).isTrue();
        Settings bad = Settings.resolve(Map.of(Setting.ORDERED, "yes", Setting.PARTITIONS, "0"), Map.of(), null);
        assertThatThrownBy(() -> bad.bool(Setting.ORDERED)).hasMessageContaining("--ordered").hasMessageContaining("yes");
        assertThatThrownBy(() -> bad.integer(Setting.PARTITIONS, 1)).hasMessageContaining("--partitions");
    }

    @Test
    void retryAndRetentionReachTheRunsAndBusConfig() {
        Settings defaults = Settings.resolve(Map.of(), Map.of(), null);
        assertThat(RunsFactory.config(defaults, "c").retryPolicy())
                .isEqualTo(RetryPolicy.exponential(Duration.ofSeconds(1), 2, Duration.ofSeconds(30), 0.2));
        assertThat(defaults.duration(Setting.RETENTION_AGE)).isEqualTo(Duration.ofHours(1));
        assertThat(defaults.optionalDuration(Setting.DEAD_LETTER_RETENTION)).isEmpty();
        Settings s = Settings.resolve(Map.of(Setting.RETRY, "fixed:250ms", Setting.DEAD_LETTER_RETENTION, "2h"),
                Map.of("RUNBUS_RETENTION_AGE", "0s"), null);
        assertThat(RunsFactory.config(s, "c").retryPolicy()).isEqualTo(RetryPolicy.fixed(Duration.ofMillis(250)));
        assertThat(s.duration(Setting.RETENTION_AGE)).isZero();
        assertThat(s.optionalDuration(Setting.DEAD_LETTER_RETENTION)).contains(Duration.ofHours(2));
        assertThat(Settings.parseRetryPolicy("on-idle")).isEqualTo(RetryPolicy.onIdle());
        assertThat(Settings.parseRetryPolicy("exponential:100ms,3,5s,0"))
                .isEqualTo(RetryPolicy.exponential(Duration.ofMillis(100), 3, Duration.ofSeconds(5), 0));
        for (String bad : new String[] {"soon", "fixed:", "exponential:1s,2,30s", "exponential:1s,x,30s,0",
                "exponential:1s,2,30s,2"}) {
            Settings b = Settings.resolve(Map.of(Setting.RETRY, bad), Map.of(), null);
            assertThatThrownBy(() -> b.retryPolicy(Setting.RETRY)).as(bad).hasMessageContaining("--retry");
        }
    }

    @Test
    void flowSettingsReachTheWorkersOptions() {
        SubscribeOptions none = RunsFactory.config(Settings.resolve(Map.of(), Map.of(), null), "c").workerOptions();
        assertThat(none.flowControlled()).isFalse();
        assertThat(none.flowFairness()).isEqualTo(FlowFairness.BY_COST);
        Settings s = Settings.resolve(Map.of(Setting.FLOW_CAP, "3", Setting.FLOW_RATE, "100/1m,20",
                Setting.FLOW_TOPIC_CAP, "64", Setting.FLOW_TOPIC_RATE, "5/1s", Setting.FLOW_FAIRNESS, "handler-time",
                Setting.FLOW_PRIORITY_AGING, "2m"), Map.of(), null);
        s.validate();
        SubscribeOptions o = RunsFactory.config(s, "c").workerOptions();
        assertThat(o.flowCap()).isEqualTo(3);
        assertThat(o.flowRate()).isEqualTo(new FlowRate(100, Duration.ofMinutes(1), 20));
        assertThat(o.flowTopicCap()).isEqualTo(64);
        assertThat(o.flowTopicRate()).isEqualTo(new FlowRate(5, Duration.ofSeconds(1), 1));
        assertThat(o.flowFairness()).isEqualTo(FlowFairness.BY_HANDLER_TIME);
        assertThat(o.flowPriorityAging()).isEqualTo(Duration.ofMinutes(2));
        assertThat(RunsFactory.config(s, "c").flowControlled()).as("triggers carry their flow key").isTrue();
    }

    @Test
    void badFlowSettingsNameTheirFlag() {
        Map<Map<Setting, String>, String> bad = Map.of(
                Map.of(Setting.FLOW_RATE, "5"), "--flow-rate: expected PERMITS/PERIOD[,BURST]",
                Map.of(Setting.FLOW_RATE, "0/1s"), "--flow-rate: a flow rate's permits must be 1 or more",
                Map.of(Setting.FLOW_TOPIC_RATE, "5/soon"), "--flow-topic-rate: expected PERMITS/PERIOD[,BURST]",
                Map.of(Setting.FLOW_CAP, "-1"), "--flow-cap must be at least 0",
                Map.of(Setting.FLOW_FAIRNESS, "fair"), "--flow-fairness must be cost or handler-time",
                Map.of(Setting.FLOW_FAIRNESS, "handler-time", Setting.FLOW_CAP, "2"),
                "--flow-fairness handler-time shares the topic's capacity",
                Map.of(Setting.FLOW_TOPIC_CAP, "8", Setting.PARTITIONS, "4"), "need --partitions 1",
                Map.of(Setting.FLOW_CAP, "1", Setting.ORDERED, "true"), "do not apply with --ordered",
                Map.of(Setting.FLOW_PRIORITY_AGING, "0s"), "--flow-priority-aging must be more than 0s");
        bad.forEach((flags, message) -> assertThatThrownBy(() -> Settings.resolve(flags, Map.of(), null).validate())
                .as("%s", flags).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message));
        Cli c = Cli.run("worker", "--flow-rate", "lots", "--handler", DemoHandler.class.getName());
        assertThat(c.exitCode).as(c.err).isEqualTo(2);
        assertThat(c.err).contains("--flow-rate").contains("'lots'");
    }

    @Test
    void badValuesNameTheOption(@TempDir Path dir) throws Exception {
        Settings s = Settings.resolve(Map.of(Setting.MIN_IDLE, "soon", Setting.CONCURRENCY, "0"), Map.of(), null);
        assertThatThrownBy(() -> s.duration(Setting.MIN_IDLE)).hasMessageContaining("--min-idle")
                .hasMessageContaining("soon");
        assertThatThrownBy(() -> s.integer(Setting.CONCURRENCY, 1)).hasMessageContaining("--concurrency");
        Path file = dir.resolve("bad.properties");
        Files.writeString(file, "redis_url=x\n");
        assertThatThrownBy(() -> Settings.resolve(Map.of(), Map.of(), file)).hasMessageContaining("redis_url");
        assertThatThrownBy(() -> Settings.resolve(Map.of(), Map.of(), dir.resolve("missing")))
                .hasMessageContaining("does not exist");
        assertThat(Settings.parseDuration("250ms")).isEqualTo(Duration.ofMillis(250));
        assertThat(Settings.parseDuration("2m")).isEqualTo(Duration.ofMinutes(2));
    }

    @Test
    void secretsAreMasked() {
        assertThat(Settings.mask("redis://:s3cret@cache:6379/0")).isEqualTo("redis://:****@cache:6379/0");
        assertThat(Settings.mask("redis://user:s3cret@cache:6379")).isEqualTo("redis://user:****@cache:6379");
        assertThat(Settings.mask("jdbc:postgresql://db:5432/app?user=app&password=s3cret&ssl=true"))
                .isEqualTo("jdbc:postgresql://db:5432/app?user=app&password=****&ssl=true");
        assertThat(Settings.mask("redis://127.0.0.1:6379")).isEqualTo("redis://127.0.0.1:6379");
    }

    @Test
    void demoDefaultsOnlyReplaceBuiltInDefaults() {
        Settings s = Settings.resolve(Map.of(Setting.MIN_IDLE, "9s"), Map.of(), null)
                .withDefaults(Map.of(Setting.MIN_IDLE, "2s", Setting.CLAIM_INTERVAL, "500ms"));
        assertThat(s.get(Setting.MIN_IDLE)).isEqualTo("9s");
        assertThat(s.get(Setting.CLAIM_INTERVAL)).isEqualTo("500ms");
    }
}
