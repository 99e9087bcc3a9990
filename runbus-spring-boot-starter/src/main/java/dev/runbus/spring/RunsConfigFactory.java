package dev.runbus.spring;

import dev.runbus.SubscribeOptions;
import dev.runbus.runs.RunsConfig;

/** The {@link RunsConfig} that the {@code runbus.runs.*} properties describe. */
final class RunsConfigFactory {

    private RunsConfigFactory() {
    }

    static RunsConfig of(RunbusProperties.Runs p, String consumer, Object meterRegistry) {
        RunsConfig.Builder b = RunsConfig.builder()
                .schema(p.getSchema())
                .topic(p.getTopic())
                .group(p.getGroup())
                .consumer(consumer)
                .workerOptions(p.getFlow().applyTo(SubscribeOptions.builder().concurrency(p.getConcurrency())
                        .maxDeliveries(p.getMaxDeliveries()).minIdle(p.getMinIdle())
                        .claimInterval(p.getClaimInterval()).batchSize(p.getBatchSize())
                        .shutdownTimeout(p.getShutdownTimeout())).build())
                .ordered(p.isOrdered())
                .retryPolicy(RetryPolicies.of(p.getRetry()))
                .migrate(p.isMigrate())
                .sweepInterval(p.getSweepInterval())
                .sweepThreshold(p.getSweepThreshold())
                .sweepBatch(p.getSweepBatch())
                .readTimeout(p.getReadTimeout())
                .cancelGrace(p.getCancelGrace())
                .cancelCheckInterval(p.getCancelCheckInterval())
                .executionTimeout(p.getExecutionTimeout())
                .meterRefreshInterval(p.getMeterRefreshInterval());
        if (meterRegistry != null) {
            b.meterRegistry(meterRegistry);
        }
        return b.build();
    }
}
