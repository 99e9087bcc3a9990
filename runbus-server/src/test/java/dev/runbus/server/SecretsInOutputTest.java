package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * No password given in a URL appears anywhere in what the runbus process prints, stdout and stderr together
 * (its own lines, its error messages, and the libraries' log lines), whether it prints the configuration or
 * fails to start. Each case runs the command as its own JVM so that all of that is captured.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SecretsInOutputTest {

    private static final String SECRET = "s3cret";
    /** The machine's PostgreSQL, which trusts: a password in the URL is accepted and ignored. */
    private static final String DATABASE = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres&password=" + SECRET;

    @Test
    void configMasksEveryFormOfPassword() throws Exception {
        List<String[]> cases = new ArrayList<>();
        for (String[] urls : new String[][] {
            {"redis://" + SECRET + "@cache:6379", "jdbc:postgresql://db:5432/app?user=app&password=" + SECRET},
            {"redis://app:" + SECRET + "@cache:6379", "jdbc:postgresql://app:" + SECRET + "@db:5432/app"},
            {"rediss://:" + SECRET + "@cache:6380", "jdbc:postgresql://db/app?password=" + SECRET + "&ssl=true"},
        }) {
            for (String format : new String[] {"--json", "--port=8080"}) {
                cases.add(new String[] {"config", "--redis-url", urls[0], "--database-url", urls[1], format});
            }
        }
        List<Run> runs = sideBySide(cases);
        for (int i = 0; i < cases.size(); i++) {
            Run r = runs.get(i);
            assertThat(r.exitCode).as(r.output).isZero();
            assertThat(r.output).as(String.join(" ", cases.get(i))).doesNotContain(SECRET).contains("****");
        }
    }

    @Test
    void failingStartsNeverPrintThePassword() throws Exception {
        List<String[]> cases = new ArrayList<>();
        // Redis refuses: the database URL with ?password= was used (and accepted) first.
        cases.add(new String[] {"serve", "--port", "0", "--handler", DemoHandler.class.getName(), "--redis-url", "redis://" + SECRET + "@127.0.0.1:1",
            "--database-url", DATABASE});
        cases.add(new String[] {"worker", "--handler", DemoHandler.class.getName(), "--redis-url",
            "redis://runbus:" + SECRET + "@127.0.0.1:1", "--database-url", DATABASE});
        // user:password@ in a JDBC URL, which runbus refuses before the driver sees it, quoting the URL.
        cases.add(new String[] {"serve", "--port", "0", "--handler", DemoHandler.class.getName(), "--redis-url", "redis://" + SECRET + "@127.0.0.1:1",
            "--database-url", "jdbc:postgresql://postgres:" + SECRET + "@127.0.0.1:5432/test"});
        // No driver takes this URL at all: quoted whole again.
        cases.add(new String[] {"worker", "--handler", DemoHandler.class.getName(), "--redis-url",
            "redis://127.0.0.1:1", "--database-url",
            "jdbc:postgres://127.0.0.1:5432/test?user=postgres&password=" + SECRET});
        List<Run> runs = sideBySide(cases);
        for (int i = 0; i < cases.size(); i++) {
            Run r = runs.get(i);
            assertThat(r.exitCode).as(r.output).isNotZero();
            assertThat(r.output).as(String.join(" ", cases.get(i))).contains("runbus: ").doesNotContain(SECRET);
        }
    }

    private record Run(int exitCode, String output) {
    }

    /**
     * Runs each case as a JVM of its own, all side by side: each spends most of its life starting up or waiting for
     * a refused connection.
     */
    private static List<Run> sideBySide(List<String[]> cases) throws IOException, InterruptedException {
        List<Process> started = new ArrayList<>();
        for (String[] args : cases) {
            started.add(start(args));
        }
        List<Run> runs = new ArrayList<>();
        for (Process p : started) {
            runs.add(finish(p));
        }
        return runs;
    }

    private static Process start(String... args) throws IOException {
        List<String> cmd = Hermetic.runbus(List.of("-Dorg.slf4j.simpleLogger.defaultLogLevel=info"), args);
        return Hermetic.child(new ProcessBuilder(cmd)).redirectErrorStream(true).start();
    }

    private static Run finish(Process p) throws IOException, InterruptedException {
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Run(p.exitValue(), output);
    }
}
