package dev.runbus.spring;

import dev.runbus.BusConfig;
import dev.runbus.Tracing;

/** The {@link BusConfig} that the {@code runbus.*} properties describe. */
final class BusConfigFactory {

    private BusConfigFactory() {
    }

    /**
     * {@code meterRegistry}: a Micrometer registry, or null for no meters; {@code tracing}: what
     * {@code runbus.tracing} names ({@link TracingChoice}).
     */
    static BusConfig of(RunbusProperties p, RedisTarget target, Object meterRegistry, Tracing tracing) {
        BusConfig.Builder b = BusConfig.builder(target.url())
                .keyPrefix(p.getKeyPrefix())
                .commandTimeout(p.getCommandTimeout())
                .heartbeatInterval(p.getHeartbeatInterval())
                .consumerDeadAfter(p.getConsumerDeadAfter())
                .janitorInterval(p.getJanitorInterval())
                .delayPollInterval(p.getDelayPollInterval())
                .scriptMode(p.getScriptMode())
                .retention(p.getRetention().isEnabled())
                .retentionAge(p.getRetention().getAge())
                .retentionKeepLast(p.getRetention().getKeepLast())
                .retentionInterval(p.getRetention().getInterval())
                .meterRefreshInterval(p.getMeterRefreshInterval())
                .redisTlsCa(p.getRedisTlsCa())
                .tracing(tracing);
        if (p.getRetention().getDeadLetters() != null) {
            b.deadLetterRetention(p.getRetention().getDeadLetters());
        }
        p.getPartitions().forEach(b::partitions);
        if (target.credentials() != null) {
            b.redisCredentials(target.credentials());
        }
        if (meterRegistry != null) {
            b.meterRegistry(meterRegistry);
        }
        return b.build();
    }
}
