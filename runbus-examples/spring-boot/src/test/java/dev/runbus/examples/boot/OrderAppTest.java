package dev.runbus.examples.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.runs.Run;
import dev.runbus.runs.RunStatus;
import dev.runbus.testkit.TestServers;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/** The example application on the real Redis and PostgreSQL, under a key prefix and a schema of its own. */
class OrderAppTest {

    @Test
    void threeOrdersMakeThreeDoneRunsAndThreeCharges() throws Exception {
        String id = UUID.randomUUID().toString().substring(0, 8);
        String prefix = "example-boot-" + id;
        String schema = "example_boot_" + id;
        try (ConfigurableApplicationContext context = SpringApplication.run(OrderApp.class,
                "--runbus.redis-url=" + TestServers.redisUri(), "--spring.datasource.url=" + TestServers.databaseUrl(),
                "--runbus.key-prefix=" + prefix, "--runbus.runs.schema=" + schema)) {
            List<Run> runs = OrderApp.placeAndBill(context, 3, Duration.ofSeconds(30));
            assertThat(runs).hasSize(3).allSatisfy(r -> assertThat(r.status()).isEqualTo(RunStatus.DONE));
            assertThat(context.getBean(ChargeHandler.class).charges.get()).isEqualTo(3);
        } finally {
            try (Connection c = DriverManager.getConnection(TestServers.databaseUrl());
                 Statement s = c.createStatement()) {
                s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            }
            dev.runbus.testkit.RedisTarget.local().deleteKeys(prefix);
        }
    }
}
