package dev.runbus.server;

import dev.runbus.AckMode;
import dev.runbus.FlowFairness;
import dev.runbus.FlowRate;
import dev.runbus.SubscribeOptions;
import dev.runbus.runs.RunHandler;
import dev.runbus.runs.Runs;
import dev.runbus.runs.RunsConfig;
import dev.runbus.server.logging.JsonLogs;
import java.time.Duration;
import java.util.Map;
import org.slf4j.MDC;

/** Builds the runs layer and its handler from the settings. */
public final class RunsFactory {

    private RunsFactory() {
    }

    /**
     * Connections a process needs: run writes go through a few group-commit threads, so handlers do not each
     * hold one; each worker's cancel watch holds one; the rest is for effects, the sweeper, the API and the marker.
     */
    public static int poolSize(Settings s, int workers) {
        return Math.min(s.integer(Setting.CONCURRENCY, 1), 8) * workers + workers + 8;
    }

    public static RunsConfig config(Settings s, String consumerOverride) {
        return config(s, consumerOverride, null);
    }

    /** @param meterRegistry where the runs layer registers its meters; null for none */
    public static RunsConfig config(Settings s, String consumerOverride, Object meterRegistry) {
        Duration minIdle = s.duration(Setting.MIN_IDLE);
        SubscribeOptions.Builder worker = SubscribeOptions.builder()
                .concurrency(s.integer(Setting.CONCURRENCY, 1))
                .minIdle(minIdle)
                .maxDeliveries(s.integer(Setting.MAX_DELIVERIES, 1))
                .claimInterval(s.duration(Setting.CLAIM_INTERVAL))
                .shutdownTimeout(s.duration(Setting.SHUTDOWN_TIMEOUT))
                .blockTime(Duration.ofMillis(Math.min(2000, Math.max(100, minIdle.toMillis() / 4))))
                .ackMode(AckMode.AFTER_WORK);
        flowControl(s, worker);
        RunsConfig.Builder b = RunsConfig.builder().schema(s.get(Setting.SCHEMA)).topic(s.get(Setting.TOPIC))
                .group(s.get(Setting.GROUP)).workerOptions(worker.build())
                .sweepInterval(s.duration(Setting.SWEEP_INTERVAL)).sweepThreshold(s.duration(Setting.SWEEP_THRESHOLD))
                .ordered(s.bool(Setting.ORDERED)).retryPolicy(s.retryPolicy(Setting.RETRY))
                .migrate(s.bool(Setting.MIGRATE)).meterRegistry(meterRegistry)
                .meterRefreshInterval(s.duration(Setting.METER_REFRESH))
                .readTimeout(s.duration(Setting.API_STATEMENT_TIMEOUT))
                .cancelGrace(s.duration(Setting.CANCEL_GRACE))
                .executionTimeout(s.duration(Setting.EXECUTION_TIMEOUT));
        if (consumerOverride != null) {
            b.consumer(consumerOverride);
        } else if (s.isSet(Setting.CONSUMER)) {
            b.consumer(s.get(Setting.CONSUMER));
        }
        return b.build();
    }

    /**
     * The flow settings on the workers' options, checked here so that a refusal names the flags: flow control does
     * not apply to --ordered runs, and a topic's cap or rate needs an unpartitioned topic.
     */
    private static void flowControl(Settings s, SubscribeOptions.Builder worker) {
        int cap = s.optionalInteger(Setting.FLOW_CAP, 0);
        int topicCap = s.optionalInteger(Setting.FLOW_TOPIC_CAP, 0);
        FlowRate rate = s.flowRate(Setting.FLOW_RATE);
        FlowRate topicRate = s.flowRate(Setting.FLOW_TOPIC_RATE);
        FlowFairness fairness = s.flowFairness(Setting.FLOW_FAIRNESS);
        Duration aging = s.duration(Setting.FLOW_PRIORITY_AGING);
        if (aging.isZero()) {
            throw new IllegalArgumentException("--flow-priority-aging must be more than 0s");
        }
        boolean flow = cap >= 0 || topicCap >= 0 || rate != null || topicRate != null;
        boolean topicWide = topicCap >= 0 || topicRate != null;
        if (flow && s.bool(Setting.ORDERED)) {
            throw new IllegalArgumentException("--flow-cap, --flow-rate, --flow-topic-cap and --flow-topic-rate do not"
                    + " apply with --ordered: a user's runs already run one at a time");
        }
        if (topicWide && s.integer(Setting.PARTITIONS, 1) > 1) {
            throw new IllegalArgumentException("--flow-topic-cap and --flow-topic-rate need --partitions 1: a count"
                    + " across partitions would be one per partition (docs/flow-control.md)");
        }
        if (fairness == FlowFairness.BY_HANDLER_TIME && !topicWide) {
            throw new IllegalArgumentException("--flow-fairness handler-time shares the topic's capacity: it needs"
                    + " --flow-topic-cap or --flow-topic-rate");
        }
        worker.flowCap(cap).flowTopicCap(topicCap).flowRate(rate).flowTopicRate(topicRate).flowFairness(fairness)
                .flowPriorityAging(aging);
    }

    /**
     * The consumer name of a process that was given none: the host name and the process's role, {@code
     * <host>-serve-<port>} or {@code <host>-worker}, so that a serve and a worker on one host (or two serves on
     * different ports) never share a pending list, and a restarted process finds its own again.
     */
    public static String defaultConsumer(String role) {
        return RunsConfig.hostName() + "-" + role;
    }

    /**
     * @param role what the process is, for its default consumer name ({@link #defaultConsumer}) when neither
     *             {@code consumerOverride} nor {@code --consumer} names one
     */
    public static Runs create(Infrastructure infra, Settings s, String consumerOverride, String role) {
        String consumer = consumerOverride != null || s.isSet(Setting.CONSUMER) ? consumerOverride
                : defaultConsumer(role);
        return create(infra, s, consumer);
    }

    public static Runs create(Infrastructure infra, Settings s, String consumerOverride) {
        RunsConfig config = config(s, consumerOverride, infra.metrics() == null ? null : infra.metrics().registry());
        JsonLogs.process(Map.of("topic", config.topic(), "group", config.group(), "consumer", config.consumer()));
        return Runs.create(infra.bus(), infra.dataSource(), config);
    }

    /**
     * The handler class named by --handler: public, with a public no-argument constructor, looked for on runbus's
     * classpath and then in --handler-path's jars and folders.
     */
    public static RunHandler handler(Settings s) {
        String name = s.get(Setting.HANDLER);
        try {
            Class<?> c = Class.forName(name, true, HandlerPath.loader(s.get(Setting.HANDLER_PATH)));
            if (!RunHandler.class.isAssignableFrom(c)) {
                throw new IllegalArgumentException("--handler " + name + " does not implement " + RunHandler.class.getName());
            }
            return withRunInLogs((RunHandler) c.getDeclaredConstructor().newInstance());
        } catch (ClassNotFoundException e) {
            throw new IllegalArgumentException("--handler " + name + ": no such class on the classpath"
                    + (s.isSet(Setting.HANDLER_PATH) ? " nor in --handler-path " + s.get(Setting.HANDLER_PATH)
                    : " (give the jar that holds it with --handler-path)"));
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException("--handler " + name + ": cannot create it with a public no-argument "
                    + "constructor (" + e + ")");
        }
    }

    /** The handler with its run's id in the logging context while it executes: JSON log lines carry it. */
    static RunHandler withRunInLogs(RunHandler handler) {
        return run -> {
            String id = run.runId().toString();
            MDC.put("run_id", id);
            MDC.put("message_id", id); // a run's trigger has the run's id as its message id
            try {
                return handler.execute(run);
            } finally {
                MDC.remove("run_id");
                MDC.remove("message_id");
            }
        };
    }
}
