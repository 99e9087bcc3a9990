package dev.runbus.spring;

import dev.runbus.SubscribeOptions;

/** The {@link SubscribeOptions} of one listener: {@code runbus.listener.*}, overridden by its annotation. */
final class SubscribeOptionsFactory {

    private SubscribeOptionsFactory() {
    }

    static SubscribeOptions.Builder of(RunbusProperties.Listener p) {
        SubscribeOptions.Builder b = SubscribeOptions.builder()
                .concurrency(p.getConcurrency())
                .batchSize(p.getBatchSize())
                .blockTime(p.getBlockTime())
                .minIdle(p.getMinIdle())
                .maxDeliveries(p.getMaxDeliveries())
                .claimInterval(p.getClaimInterval())
                .shutdownTimeout(p.getShutdownTimeout())
                .ackMode(p.getAckMode())
                .ordered(p.isOrdered())
                .leaseTime(p.getLeaseTime())
                .retryPolicy(RetryPolicies.of(p.getRetry()));
        if (p.getKeepAliveInterval() != null) {
            b.keepAliveInterval(p.getKeepAliveInterval());
        }
        return p.getFlow().applyTo(b);
    }
}
