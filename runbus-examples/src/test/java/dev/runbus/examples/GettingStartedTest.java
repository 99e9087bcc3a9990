package dev.runbus.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.runs.Run;
import dev.runbus.runs.RunStatus;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TestServers;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The README's two programs run as shown, on a real Redis and PostgreSQL, each under a namespace of its own. */
class GettingStartedTest {

    private final RedisTarget redis = RedisTarget.local();
    private final String suffix = UUID.randomUUID().toString().substring(0, 8);

    @Test
    void theBusProgramHandlesEachOrderOnce() throws Exception {
        String prefix = "readme-" + suffix;
        try {
            assertThat(GettingStarted.run(redis.uri(), prefix))
                    .containsExactlyInAnyOrder("{\"order\":1}", "{\"order\":2}", "{\"order\":3}");
            assertThat(redis.redis().xpending(prefix + ":{orders}:stream", "billing").getCount()).isZero();
        } finally {
            redis.deleteKeys(prefix);
        }
    }

    @Test
    void theRunsProgramFinishesOneRunOnce() throws Exception {
        String prefix = "readme-runs-" + suffix;
        String schema = "readme_" + suffix;
        try {
            Run run = RunsGettingStarted.run(redis.uri(), TestServers.databaseUrl(), prefix, schema);
            assertThat(run.status()).isEqualTo(RunStatus.DONE);
            assertThat(run.attempts()).isEqualTo(1);
            assertThat(run.idempotencyKey()).isEqualTo("order-42");
        } finally {
            redis.deleteKeys(prefix);
            ExampleKeys.dropSchema(TestServers.databaseUrl(), schema);
        }
    }
}
