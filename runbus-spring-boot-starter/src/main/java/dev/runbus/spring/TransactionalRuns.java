package dev.runbus.spring;

import dev.runbus.runs.KeyScope;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.Runs;
import dev.runbus.runs.SubmitResult;
import java.sql.Connection;
import java.time.Duration;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;

/**
 * Submits runs in the Spring-managed transaction of the calling thread ({@code @Transactional}, a
 * {@code TransactionTemplate}) on the application's DataSource: the run is written on that transaction's connection
 * ({@link Runs#within}), published once it commits, and never if it rolls back (docs/runs.md, "Submitting in your
 * transaction"). Outside a Spring transaction it is {@link Runs#submit(NewRun, KeyScope)}: committed and published at
 * once (a connection handed out of the pool with auto-commit off would otherwise roll the run back when returned).
 * The transaction manager must manage the same DataSource (Boot's does).
 */
public final class TransactionalRuns {

    private final Runs runs;
    private final DataSource dataSource;

    public TransactionalRuns(Runs runs, DataSource dataSource) {
        this.runs = runs;
        this.dataSource = dataSource;
    }

    /** {@link dev.runbus.runs.RunsInTransaction#submit(NewRun)} in the current transaction. */
    public SubmitResult submit(NewRun request) {
        return submit(request, KeyScope.GLOBAL);
    }

    /** {@link dev.runbus.runs.RunsInTransaction#submit(NewRun, KeyScope)} in the current transaction. */
    public SubmitResult submit(NewRun request, KeyScope scope) {
        return submit(request, scope, Duration.ZERO);
    }

    /**
     * {@link dev.runbus.runs.RunsInTransaction#submit(NewRun, KeyScope, Duration)} in the current transaction: a run
     * due {@code delay} after its creation.
     */
    public SubmitResult submit(NewRun request, KeyScope scope, Duration delay) {
        Connection c = DataSourceUtils.getConnection(dataSource);
        try {
            if (DataSourceUtils.isConnectionTransactional(c, dataSource)) {
                return runs.within(c).submit(request, scope, delay);
            }
        } finally {
            DataSourceUtils.releaseConnection(c, dataSource);
        }
        return runs.submit(request, scope, delay);
    }
}
