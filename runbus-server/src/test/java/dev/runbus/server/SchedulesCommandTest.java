package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code runbus schedules} on the machine's PostgreSQL (docs/cli.md): put from JSON (inline and --file), show, list,
 * preview, pause, resume, backfill, delete; a bad schedule or an unknown name is exit 2 naming what is wrong.
 */
class SchedulesCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final String schema = TestServers.newSchema("scmd");
    private final String prefix = "schedules-cmd-" + UUID.randomUUID().toString().substring(0, 8);

    @BeforeEach
    void migrate() {
        Cli m = Cli.run("migrate", "--database-url", TestServers.databaseUrl(), "--schema", schema);
        assertThat(m.exitCode).as(m.err).isZero();
    }

    @AfterEach
    void drop() {
        TestServers.dropSchema(schema);
        RedisTarget.local().deleteKeys(prefix);
    }

    private Cli cli(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--redis-url", RedisTarget.local().uri(), "--key-prefix", prefix,
                "--database-url", TestServers.databaseUrl(), "--schema", schema));
        return Cli.run(all.toArray(new String[0]));
    }

    private JsonNode json(String... args) throws Exception {
        Cli c = cli(args);
        assertThat(c.exitCode).as(String.join(" ", args) + ": " + c.err).isZero();
        return JSON.readTree(c.out);
    }

    @Test
    void aScheduleIsPutShownListedPreviewedPausedResumedBackfilledAndDeleted() throws Exception {
        String body = "{\"every\": \"PT1H\", \"start_at\": \"2026-01-01T00:00:00Z\", \"run\": {\"session_id\": \"s\","
                + " \"user_id\": \"u\", \"input\": \"hourly\"}}";
        assertThat(json("schedules", "put", "hourly", body, "--json").get("every").asText()).isEqualTo("PT1H");
        Path file = Files.createTempFile("schedule", ".json");
        Files.writeString(file, body.replace("PT1H", "PT2H"));
        assertThat(json("schedules", "put", "two-hourly", "--file", file.toString(), "--json").get("every").asText())
                .isEqualTo("PT2H");

        assertThat(json("schedules", "show", "hourly", "--json").get("next_fire_at").isNull()).isFalse();
        assertThat(json("schedules", "list", "--json").get("schedules")).hasSize(2);
        assertThat(json("schedules", "list", "--after", "hourly", "--json").get("schedules")).hasSize(1);
        assertThat(cli("schedules", "list").out).contains("every PT1H").contains("two-hourly");
        assertThat(json("schedules", "preview", "hourly", "--n", "3", "--json").get("fires")).hasSize(3);
        assertThat(json("schedules", "pause", "hourly", "--json").get("paused").asBoolean()).isTrue();
        assertThat(json("schedules", "resume", "hourly", "--json").get("paused").asBoolean()).isFalse();
        assertThat(json("schedules", "backfill", "hourly", "--from", "2026-01-01T00:00:00Z", "--to",
                "2026-01-01T02:00:00Z", "--json").get("made").asInt()).as("0:00, 1:00, 2:00").isEqualTo(3);
        assertThat(cli("schedules", "delete", "hourly").exitCode).isZero();
        assertThat(cli("schedules", "delete", "two-hourly").exitCode).isZero();
        assertThat(json("schedules", "list", "--json").get("schedules")).isEmpty();
    }

    @Test
    void badInputIsExitTwoNamingWhatIsWrong() {
        Cli bad = cli("schedules", "put", "bad", "{\"cron\": \"61 * * * *\", \"run\": {\"session_id\": \"s\","
                + " \"user_id\": \"u\", \"input\": \"x\"}}");
        assertThat(bad.exitCode).isEqualTo(2);
        assertThat(bad.err).contains("cron").contains("61");
        for (List<String> args : List.of(List.of("schedules", "show", "none"), List.of("schedules", "pause", "none"),
                List.of("schedules", "delete", "none"), List.of("schedules", "put", "a b", "{}"),
                List.of("schedules", "put", "x", "--file", "/nonexistent/file.json"),
                List.of("schedules", "put", "x"),
                List.of("schedules", "backfill", "none", "--from", "soon", "--to", "1h"))) {
            Cli r = cli(args.toArray(new String[0]));
            assertThat(r.exitCode).as(args + ": " + r.err).isEqualTo(2);
        }
    }
}
