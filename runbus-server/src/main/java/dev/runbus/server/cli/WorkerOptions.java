package dev.runbus.server.cli;

import dev.runbus.server.Setting;
import dev.runbus.server.logging.JsonLogs;
import java.util.Map;
import picocli.CommandLine.Option;

/** How workers and the sweeper behave. */
public final class WorkerOptions {

    @Option(names = "--consumer", paramLabel = "NAME", description = "consumer name, stable across restarts; "
            + "default: <host>-serve-<port> for serve, <host>-worker for worker")
    String consumer;

    @Option(names = "--concurrency", paramLabel = "N", description = "handlers running at once; default 64")
    Integer concurrency;

    @Option(names = "--partitions", paramLabel = "N", description = "partitions of the runs topic, the same in "
            + "every process; fixed once the topic exists; default 1")
    Integer partitions;

    @Option(names = "--ordered", description = "runs of one user execute one at a time, in submission order; "
            + "partitions run in parallel (so give the topic several); default off")
    Boolean ordered;

    @Option(names = "--retry", paramLabel = "POLICY", description = "when a failed run is tried again: "
            + "exponential:BASE,FACTOR,MAX,JITTER, fixed:DURATION or on-idle; default exponential:1s,2,30s,0.2")
    String retry;

    @Option(names = "--retention-age", paramLabel = "DURATION", description = "acknowledged stream entries are "
            + "trimmed once this old (an entry a group still needs never is); default 1h")
    String retentionAge;

    @Option(names = "--dead-letter-retention", paramLabel = "DURATION", description = "dead letters older than "
            + "this are trimmed; default: kept until purged")
    String deadLetterRetention;

    @Option(names = "--min-idle", paramLabel = "DURATION", description = "idle time before a delivery is taken "
            + "over (500ms, 30s, 2m); a failed run is retried after 1, 2, 4 ... 30 s instead; default 30s")
    String minIdle;

    @Option(names = "--max-deliveries", paramLabel = "N", description = "deliveries before a run fails; default 3")
    Integer maxDeliveries;

    @Option(names = "--claim-interval", paramLabel = "DURATION", description = "how often idle deliveries are "
            + "looked for; default 5s")
    String claimInterval;

    @Option(names = "--sweep-interval", paramLabel = "DURATION", description = "how often the sweeper runs; default 30s")
    String sweepInterval;

    @Option(names = "--meter-refresh", paramLabel = "DURATION", description = "how often the gauges that need Redis or"
            + " PostgreSQL are read for /metrics; default 10s")
    String meterRefresh;

    @Option(names = "--sweep-threshold", paramLabel = "DURATION", description = "unfinished runs untouched this "
            + "long are examined by the sweeper; default 2m")
    String sweepThreshold;

    @Option(names = "--shutdown-timeout", paramLabel = "DURATION", description = "how long a graceful stop waits "
            + "for running handlers; default 30s")
    String shutdownTimeout;

    @Option(names = "--cancel-grace", paramLabel = "DURATION", description = "how long a running run's handler may "
            + "go on after it is told of its cancel before its thread is interrupted; default 10s")
    String cancelGrace;

    @Option(names = "--execution-timeout", paramLabel = "DURATION", description = "how long one attempt's handler "
            + "may run when its run sets no timeout; then it is told to stop, interrupted after --cancel-grace, and the "
            + "attempt fails; default 0s: none")
    String executionTimeout;

    @Option(names = "--flow-cap", paramLabel = "N", description = "flow control: at most N runs of one flow key at "
            + "once across the workers; default: no cap per key")
    Integer flowCap;

    @Option(names = "--flow-rate", paramLabel = "RATE", description = "flow control: the runs of one flow key start "
            + "at most at PERMITS/PERIOD[,BURST] (5/1s, 100/1m,20); default: no rate")
    String flowRate;

    @Option(names = "--flow-topic-cap", paramLabel = "N", description = "flow control: at most N runs with a flow key "
            + "at once in all, shared fairly between the keys; needs --partitions 1; default: none")
    Integer flowTopicCap;

    @Option(names = "--flow-topic-rate", paramLabel = "RATE", description = "flow control: the runs with a flow key "
            + "start at most at this rate in all (as --flow-rate), shared between the keys; default: none")
    String flowTopicRate;

    @Option(names = "--flow-fairness", paramLabel = "WHAT", description = "what the topic's fair shares count: cost "
            + "or handler-time; default cost")
    String flowFairness;

    @Option(names = "--flow-priority-aging", paramLabel = "DURATION", description = "how long waiting is worth one "
            + "step of a run's priority; default 60s")
    String flowPriorityAging;

    @Option(names = "--handler", paramLabel = "CLASS", description = "RunHandler class with a public no-argument "
            + "constructor; default dev.runbus.server.DemoHandler, the demo's echo, which serve takes only on the "
            + "embedded servers: serve with --redis-url or --database-url needs this flag")
    String handler;

    @Option(names = "--handler-path", paramLabel = "PATH", description = "jars and folders (separated by the "
            + "platform's path separator) where --handler is looked for besides runbus's own classes; default: none")
    String handlerPath;

    @Option(names = "--log-format", paramLabel = "FORMAT", description = "text, or json: one JSON object per line "
            + "on stderr (time, level, logger, thread, message, topic, group, consumer, and run_id and message_id "
            + "while a run's handler executes); also RUNBUS_LOG_FORMAT; default text")
    String logFormat;

    @Option(names = "--no-migrate", description = "do not create or upgrade the runs tables; check they are there "
            + "and current (for a database role that may not create tables)")
    boolean noMigrate;

    void collect(Map<Setting, String> flags) {
        // Applied by RunbusCli before the first logger exists; checked here so that a typo is named.
        if (logFormat != null && !logFormat.equalsIgnoreCase(JsonLogs.JSON) && !logFormat.equalsIgnoreCase(JsonLogs.TEXT)) {
            throw new IllegalArgumentException("--log-format must be text or json, got '" + logFormat + "'");
        }
        if (noMigrate) {
            flags.put(Setting.MIGRATE, "false");
        }
        ConnectionOptions.put(flags, Setting.CONSUMER, consumer);
        ConnectionOptions.put(flags, Setting.CONCURRENCY, concurrency);
        ConnectionOptions.put(flags, Setting.PARTITIONS, partitions);
        ConnectionOptions.put(flags, Setting.ORDERED, ordered);
        ConnectionOptions.put(flags, Setting.MIN_IDLE, minIdle);
        ConnectionOptions.put(flags, Setting.RETRY, retry);
        ConnectionOptions.put(flags, Setting.RETENTION_AGE, retentionAge);
        ConnectionOptions.put(flags, Setting.DEAD_LETTER_RETENTION, deadLetterRetention);
        ConnectionOptions.put(flags, Setting.MAX_DELIVERIES, maxDeliveries);
        ConnectionOptions.put(flags, Setting.CLAIM_INTERVAL, claimInterval);
        ConnectionOptions.put(flags, Setting.SWEEP_INTERVAL, sweepInterval);
        ConnectionOptions.put(flags, Setting.METER_REFRESH, meterRefresh);
        ConnectionOptions.put(flags, Setting.SWEEP_THRESHOLD, sweepThreshold);
        ConnectionOptions.put(flags, Setting.SHUTDOWN_TIMEOUT, shutdownTimeout);
        ConnectionOptions.put(flags, Setting.CANCEL_GRACE, cancelGrace);
        ConnectionOptions.put(flags, Setting.EXECUTION_TIMEOUT, executionTimeout);
        ConnectionOptions.put(flags, Setting.FLOW_CAP, flowCap);
        ConnectionOptions.put(flags, Setting.FLOW_RATE, flowRate);
        ConnectionOptions.put(flags, Setting.FLOW_TOPIC_CAP, flowTopicCap);
        ConnectionOptions.put(flags, Setting.FLOW_TOPIC_RATE, flowTopicRate);
        ConnectionOptions.put(flags, Setting.FLOW_FAIRNESS, flowFairness);
        ConnectionOptions.put(flags, Setting.FLOW_PRIORITY_AGING, flowPriorityAging);
        ConnectionOptions.put(flags, Setting.HANDLER, handler);
        ConnectionOptions.put(flags, Setting.HANDLER_PATH, handlerPath);
    }
}
