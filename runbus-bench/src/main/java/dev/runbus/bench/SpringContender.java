package dev.runbus.bench;

import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulConnection;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettucePoolingClientConfiguration;
import org.springframework.data.redis.connection.stream.Consumer;
import org.springframework.data.redis.connection.stream.MapRecord;
import org.springframework.data.redis.connection.stream.ReadOffset;
import org.springframework.data.redis.connection.stream.StreamOffset;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.stream.StreamMessageListenerContainer;
import org.springframework.data.redis.stream.StreamMessageListenerContainer.StreamMessageListenerContainerOptions;

/**
 * Spring Data Redis's {@link StreamMessageListenerContainer}, as its reference documentation shows it: one
 * {@code receive(Consumer, StreamOffset.lastConsumed, listener)} per consumer, and in the listener an explicit
 * {@code opsForStream().acknowledge(...)} of the record. Pooled Lettuce connections (commons-pool2), reads of
 * up to 100 records with a poll timeout of 100 ms.
 */
final class SpringContender implements Contender {

    static final String NAME = "Spring container";

    private final LettuceConnectionFactory factory;
    private final StringRedisTemplate template;
    private final String prefix;
    /** The acks awaited by the latency measurement running now; null when none is timed. */
    private volatile AckObserver.Expected awaited;

    SpringContender(String redisUri, String prefix) {
        RedisURI uri = RedisURI.create(redisUri);
        RedisStandaloneConfiguration server = new RedisStandaloneConfiguration(uri.getHost(), uri.getPort());
        server.setDatabase(uri.getDatabase());
        String userInfo = java.net.URI.create(redisUri).getUserInfo();
        if (userInfo != null && !userInfo.isEmpty()) {
            server.setPassword(userInfo.substring(userInfo.indexOf(':') + 1));
        }
        GenericObjectPoolConfig<StatefulConnection<?, ?>> pool = new GenericObjectPoolConfig<>();
        pool.setMaxTotal(64);
        pool.setMaxIdle(64);
        LettucePoolingClientConfiguration client = LettucePoolingClientConfiguration.builder().poolConfig(pool).build();
        this.factory = new LettuceConnectionFactory(server, client);
        factory.afterPropertiesSet();
        if (!factory.isRunning()) {
            factory.start();
        }
        // Sees each XACK's reply on Lettuce's event loop, as runbus's acks are seen; added before the first
        // connection, which is made lazily, so that every connection reports to it.
        ((io.lettuce.core.AbstractRedisClient) factory.getNativeClient()).addListener(new AckReplies());
        this.template = new StringRedisTemplate(factory);
        this.prefix = prefix;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String describe() {
        return "Spring Data Redis 4.1 StreamMessageListenerContainer on a pooled LettuceConnectionFactory:"
                + " receive(...) per consumer, batchSize 100, pollTimeout 100 ms, explicit acknowledge per record";
    }

    @Override
    public String keyPrefix() {
        return prefix;
    }

    @Override
    public Consumers start(Target target, int consumers, Probe probe) {
        String key = target.streamKey();
        String group = target.group();
        AckObserver.Expected acks = probe.timing() ? new AckObserver.Expected(probe) : null;
        awaited = acks;
        ExecutorService executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "spring-stream");
            t.setDaemon(true);
            return t;
        });
        StreamMessageListenerContainerOptions<String, MapRecord<String, String, String>> options =
                StreamMessageListenerContainerOptions.builder().pollTimeout(Duration.ofMillis(100)).batchSize(100)
                        .executor(executor).build();
        StreamMessageListenerContainer<String, MapRecord<String, String, String>> container =
                StreamMessageListenerContainer.create(factory, options);
        for (int i = 0; i < consumers; i++) {
            container.receive(Consumer.from(group, "spring-" + i), StreamOffset.create(key, ReadOffset.lastConsumed()),
                    record -> {
                        String id = record.getId().getValue();
                        if (acks != null) {
                            acks.expect(id, Payloads.enqueuedAt(record.getValue().get("payload")));
                        }
                        probe.handled();
                        template.opsForStream().acknowledge(key, group, record.getId());
                        if (acks != null) {
                            acks.returned(id); // in case the reply's event did not stamp it first
                        }
                    });
        }
        container.start();
        return () -> {
            container.stop();
            executor.shutdown();
            try {
                executor.awaitTermination(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
    }

    /** Stamps each awaited XACK when Lettuce completes it (arguments: key, group, then the ids). */
    private final class AckReplies implements io.lettuce.core.event.command.CommandListener {
        @Override
        public void commandSucceeded(io.lettuce.core.event.command.CommandSucceededEvent event) {
            AckObserver.Expected acks = awaited;
            if (acks != null && event.getCommand().getType() == io.lettuce.core.protocol.CommandType.XACK) {
                acks.acked(event.getCommand().getArgs().toCommandString().split(" "), Payloads.now());
            }
        }
    }

    @Override
    public void close() {
        factory.destroy();
    }
}
