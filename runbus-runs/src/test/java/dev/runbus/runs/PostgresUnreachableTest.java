package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.TcpProxy;
import java.net.URI;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL stops answering without closing the connections (a partition: here a proxy that holds the traffic).
 * A statement already sent waits for the driver's socket timeout, and then the whole group fails; the groups
 * behind it fail on the pool's connection timeout. Without a socket timeout the first statement waits for TCP
 * to give up, and every submission with it.
 */
class PostgresUnreachableTest extends RunsTestSupport {

    static final int SUBMITS = PostgresDownTest.SUBMITS;
    static final int SOCKET_TIMEOUT_S = 5; // the server's default is 30 s; shorter here to keep the test short

    @Test
    void submitsFailWithinTheSocketTimeout_whenPostgresStopsAnswering() throws Exception {
        URI db = URI.create(TestDatabase.URL.substring("jdbc:".length()));
        ExecutorService clients = Executors.newFixedThreadPool(SUBMITS);
        try (TcpProxy proxy = TcpProxy.start(db.getHost(), db.getPort() < 0 ? 5432 : db.getPort())) {
            HikariConfig hc = new HikariConfig();
            hc.setJdbcUrl("jdbc:postgresql://127.0.0.1:" + proxy.port() + db.getPath() + "?" + db.getQuery());
            hc.setConnectionTimeout(3_000);
            hc.setValidationTimeout(2_000);
            hc.addDataSourceProperty("socketTimeout", String.valueOf(SOCKET_TIMEOUT_S));
            hc.setMaximumPoolSize(8);
            try (HikariDataSource ds = new HikariDataSource(hc)) {
                Runs runs = Runs.create(bus(), ds, config(schema, "w1", workerOptions().build()));
                assertThat(runs.submit(NewRun.of("s", "u", "before")).created()).isTrue();

                proxy.pause();
                long tookMs = PostgresDownTest.failingWave(runs, clients, "unanswered");
                System.out.printf("%d submits with PostgreSQL not answering all failed after %d ms (socket timeout"
                        + " %d s, connection timeout 3 s)%n", SUBMITS, tookMs, SOCKET_TIMEOUT_S);
                assertThat(tookMs).isLessThan(25_000);
                proxy.resume();
                runs.close();
            }
        } finally {
            clients.shutdownNow();
        }
    }
}
