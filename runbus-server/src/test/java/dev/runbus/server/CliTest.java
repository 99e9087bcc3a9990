package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Usage, help, version and errors of the runbus command. No servers needed. */
class CliTest {

    @Test
    void versionAndHelp() {
        Cli v = Cli.run("--version");
        assertThat(v.exitCode).isZero();
        assertThat(v.out).startsWith("runbus ");
        for (String command : new String[] {"demo", "dev", "serve", "worker", "config", "pending", "dlq", "consumers", "stats",
                "partitions", "scheduled", "groups", "runs"}) {
            Cli h = Cli.run(command, "--help");
            assertThat(h.exitCode).as(command).isZero();
            assertThat(h.out).as(command).contains("Usage: runbus " + command);
        }
        assertThat(Cli.run("dlq", "replay", "--help").out).contains("--database-url");
        assertThat(Cli.run("partitions", "--help").out).contains("TOPIC").contains("--group").contains("lease age")
                .contains("/v1/streams/{topic}/partitions");
        for (String command : new String[] {"demo", "serve", "worker"}) {
            assertThat(Cli.run(command, "--help").out).as(command).contains("--ordered").contains("--partitions");
        }
    }

    @Test
    void demoHelpShowsTheDemosDefaults_andNotTheOptionsItRefuses() {
        String demo = Cli.run("demo", "--help").out;
        for (String refused : new String[] {"--key-prefix", "--schema", "--topic", "--group", "--handler"}) {
            assertThat(demo).as(refused).doesNotContain(refused + "=");
        }
        assertThat(demo.replaceAll("\\s+", " ")).contains("default 2s in the demo")
                .contains("default 500ms in the demo").contains("default 20s in the demo")
                .contains("default 10s in the demo").doesNotContain("default 30s");
        String serve = Cli.run("serve", "--help").out;
        assertThat(serve).contains("--handler=").contains("--key-prefix=");
        assertThat(serve.replaceAll("\\s+", " ")).contains("over (500ms, 30s, 2m); a failed run is retried after 1, 2, 4 "
                + "... 30 s instead; default 30s").doesNotContain("in the demo");
        // Hidden, still refused by name rather than as unknown.
        Cli prefix = Cli.run("demo", "--key-prefix", "x");
        assertThat(prefix.exitCode).isEqualTo(2);
        assertThat(prefix.err).contains("--key-prefix cannot be given to demo");
    }

    @Test
    void usageErrorsExitTwoWithAMessageOnStderr() {
        Cli none = Cli.run();
        assertThat(none.exitCode).isEqualTo(2);
        assertThat(none.err).contains("missing command");
        Cli unknown = Cli.run("demo", "--bogus");
        assertThat(unknown.exitCode).isEqualTo(2);
        assertThat(unknown.err).contains("--bogus");
        Cli noRedis = Cli.run("pending");
        assertThat(noRedis.exitCode).isEqualTo(2);
        assertThat(noRedis.err).contains("needs --redis-url");
        Cli badRuns = Cli.run("demo", "--runs", "0");
        assertThat(badRuns.exitCode).isEqualTo(2);
        assertThat(badRuns.err).contains("--runs");
        Cli noTopic = Cli.run("partitions", "--redis-url", "redis://127.0.0.1:1");
        assertThat(noTopic.exitCode).isEqualTo(2);
        assertThat(noTopic.err).contains("TOPIC");
        Cli badDuration = Cli.run("demo", "--min-idle", "soon", "--runs", "1");
        assertThat(badDuration.exitCode).isEqualTo(2);
        assertThat(badDuration.err).contains("--min-idle");
    }

    @Test
    void configPrintsEffectiveValuesWithSecretsMasked() throws Exception {
        Cli c = Cli.run("config", "--redis-url", "redis://:hunter2@cache:6379", "--port", "9090", "--json");
        assertThat(c.exitCode).isZero();
        assertThat(c.out).doesNotContain("hunter2");
        var json = Json.MAPPER.readTree(c.out);
        assertThat(json.get("redis-url").get("value").asText()).isEqualTo("redis://:****@cache:6379");
        assertThat(json.get("port").get("value").asText()).isEqualTo("9090");
        assertThat(json.get("port").get("source").asText()).isEqualTo("flag");
        assertThat(json.get("group").get("source").asText()).isEqualTo("default");
        Cli table = Cli.run("config");
        assertThat(table.out).contains("key-prefix").contains("RUNBUS_KEY_PREFIX").contains("default");
    }

    @Test
    void clusterAndSentinelUrlsAreMaskedAndABadOneIsNamedWithoutItsPassword() throws Exception {
        for (String url : new String[] {"redis-cluster://s3cret@n1:7000,n2:7001", "redis://s3cret@cache:6379",
                "redis-sentinel://:s3cret@s1:26379,s2:26379#main"}) {
            Cli c = Cli.run("config", "--redis-url", url, "--json");
            assertThat(c.exitCode).isZero();
            assertThat(c.out).as(url).doesNotContain("s3cret").contains("****");
        }
        Cli bad = Cli.run("stats", "--redis-url", "redis-cluster://s3cret@127.0.0.1:1/5");
        assertThat(bad.exitCode).isNotZero();
        assertThat(bad.err).contains("database 0").doesNotContain("s3cret");
    }

    @Test
    void unreachableRedisIsAFailureNamingTheAddress() {
        Cli c = Cli.run("stats", "--redis-url", "redis://127.0.0.1:1");
        assertThat(c.exitCode).isEqualTo(1);
        assertThat(c.err).contains("127.0.0.1:1");
    }
}
