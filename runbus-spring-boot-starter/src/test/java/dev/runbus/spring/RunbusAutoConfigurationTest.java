package dev.runbus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Delivery;
import dev.runbus.Message;
import dev.runbus.SubscribeOptions;
import dev.runbus.runs.Runs;
import dev.runbus.testkit.OwnRedis;
import dev.runbus.testkit.TcpProxy;
import dev.runbus.testkit.TestServers;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.mock.env.MockEnvironment;

/** The auto-configuration on the real Redis and PostgreSQL, each test under a key prefix of its own. */
class RunbusAutoConfigurationTest {

    private final String prefix = TestServers.newPrefix("rbboot");

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RunbusJsonAutoConfiguration.class, RunbusAutoConfiguration.class,
                    RunbusRunsAutoConfiguration.class, RunbusHealthAutoConfiguration.class,
                    RunbusEndpointAutoConfiguration.class))
            .withPropertyValues("runbus.redis-url=" + TestServers.redisUri(), "runbus.key-prefix=" + prefix);

    @AfterEach
    void removeKeys() {
        TestServers.deleteKeys(prefix);
    }

    @Test
    void propertiesBindIntoTheBusAndListenerOptions() {
        runner.withPropertyValues("runbus.command-timeout=3s", "runbus.partitions.orders=4",
                        "runbus.retention.age=5m", "runbus.listener.concurrency=3", "runbus.listener.min-idle=12s",
                        "runbus.listener.retry.policy=fixed", "runbus.listener.retry.delay=250ms",
                        "runbus.runs.schema=elsewhere", "runbus.consumer=node-7")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(Bus.class).hasSingleBean(RunbusTemplate.class)
                            .hasSingleBean(RunbusListenerContainer.class).hasSingleBean(RunbusEndpoint.class)
                            .hasBean("runbusHealthIndicator").doesNotHaveBean(Runs.class);
                    RunbusProperties p = context.getBean(RunbusProperties.class);
                    BusConfig bus = BusConfigFactory.of(p, RedisTarget.of(p, context.getEnvironment()), null,
                            dev.runbus.Tracing.OFF);
                    assertThat(bus.commandTimeout()).isEqualTo(Duration.ofSeconds(3));
                    assertThat(bus.partitionsOf("orders")).isEqualTo(4);
                    assertThat(bus.retentionAge()).isEqualTo(Duration.ofMinutes(5));
                    assertThat(bus.keyPrefix()).isEqualTo(prefix);
                    SubscribeOptions options = SubscribeOptionsFactory.of(p.getListener()).build();
                    assertThat(options.concurrency()).isEqualTo(3);
                    assertThat(options.minIdle()).isEqualTo(Duration.ofSeconds(12));
                    assertThat(options.retryPolicy()).isEqualTo(dev.runbus.RetryPolicy.fixed(Duration.ofMillis(250)));
                    assertThat(p.getRuns().getSchema()).isEqualTo("elsewhere");
                    assertThat(ConsumerName.of(p, context.getEnvironment())).isEqualTo("node-7");
                });
    }

    @Test
    void theDefaultsOfThePropertiesAreTheLibrarys() {
        RunbusProperties p = new RunbusProperties();
        BusConfig mine = BusConfigFactory.of(p, new RedisTarget("redis://h:1", null), null,
                TracingChoice.of(p.getTracing(), null));
        BusConfig library = BusConfig.builder("redis://h:1").build();
        assertThat(mine).usingRecursiveComparison().ignoringFields("clock", "listener").isEqualTo(library);
        assertThat(mine.tracing()).isSameAs(dev.runbus.Tracing.OFF);
        assertThat(SubscribeOptionsFactory.of(p.getListener()).build()).isEqualTo(SubscribeOptions.defaults());
        dev.runbus.runs.RunsConfig runs = RunsConfigFactory.of(p.getRuns(), "c", null);
        dev.runbus.runs.RunsConfig libraryRuns = dev.runbus.runs.RunsConfig.builder().consumer("c").build();
        assertThat(runs).usingRecursiveComparison().isEqualTo(libraryRuns);
    }

    @Test
    void theTlsTracingHealthAndRunsWorkerPropertiesReachTheBuiltConfigs(@TempDir Path dir) throws Exception {
        Path pem = Files.writeString(dir.resolve("ca.pem"), "-----BEGIN CERTIFICATE-----\n");
        RunbusProperties p = new Binder(new MapConfigurationPropertySource(Map.of(
                "runbus.redis-tls-ca", pem.toString(), "runbus.tracing", "global", "runbus.health.timeout", "750ms",
                "runbus.runs.min-idle", "45s", "runbus.runs.claim-interval", "7s", "runbus.runs.batch-size", "20",
                "runbus.runs.shutdown-timeout", "12s", "runbus.runs.read-timeout", "3s",
                "runbus.runs.meter-refresh-interval", "20s"))).bind("runbus", RunbusProperties.class).get();

        BusConfig bus = BusConfigFactory.of(p, new RedisTarget("rediss://h:1", null), null,
                TracingChoice.of(p.getTracing(), null));
        assertThat(bus.redisTlsCa()).isEqualTo(pem);
        assertThat(bus.tracing()).hasToString(dev.runbus.Tracing.global().toString());
        assertThat(p.getHealth().getTimeout()).isEqualTo(Duration.ofMillis(750));

        dev.runbus.runs.RunsConfig runs = RunsConfigFactory.of(p.getRuns(), "c", null);
        SubscribeOptions worker = runs.workerSubscription();
        assertThat(worker.minIdle()).isEqualTo(Duration.ofSeconds(45));
        assertThat(worker.claimInterval()).isEqualTo(Duration.ofSeconds(7));
        assertThat(worker.batchSize()).isEqualTo(20);
        assertThat(worker.shutdownTimeout()).isEqualTo(Duration.ofSeconds(12));
        assertThat(runs.readTimeout()).isEqualTo(Duration.ofSeconds(3));
        assertThat(runs.meterRefreshInterval()).isEqualTo(Duration.ofSeconds(20));
    }

    @Test
    void theFlowPropertiesReachTheListenersAndTheRunsWorkersOptions() {
        RunbusProperties p = new Binder(new MapConfigurationPropertySource(Map.of(
                "runbus.listener.flow.cap", "3", "runbus.listener.flow.rate", "100/1m,20",
                "runbus.listener.flow.topic-cap", "64", "runbus.listener.flow.topic-rate", "5/1s",
                "runbus.listener.flow.fairness", "by-handler-time", "runbus.listener.flow.priority-aging", "2m",
                "runbus.runs.flow.cap", "2", "runbus.runs.flow.rate", "10/1s,5")))
                .bind("runbus", RunbusProperties.class).get();
        SubscribeOptions listener = SubscribeOptionsFactory.of(p.getListener()).build();
        assertThat(listener.flowCap()).isEqualTo(3);
        assertThat(listener.flowRate()).isEqualTo(new dev.runbus.FlowRate(100, Duration.ofMinutes(1), 20));
        assertThat(listener.flowTopicCap()).isEqualTo(64);
        assertThat(listener.flowTopicRate()).isEqualTo(dev.runbus.FlowRate.perSecond(5));
        assertThat(listener.flowFairness()).isEqualTo(dev.runbus.FlowFairness.BY_HANDLER_TIME);
        assertThat(listener.flowPriorityAging()).isEqualTo(Duration.ofMinutes(2));
        dev.runbus.runs.RunsConfig runs = RunsConfigFactory.of(p.getRuns(), "c", null);
        assertThat(runs.workerSubscription().flowCap()).isEqualTo(2);
        assertThat(runs.workerSubscription().flowRate()).isEqualTo(dev.runbus.FlowRate.perSecond(10).withBurst(5));
        assertThat(runs.flowControlled()).as("triggers carry their flow key").isTrue();

        RunbusProperties bad = new Binder(new MapConfigurationPropertySource(Map.of("runbus.runs.flow.rate", "fast")))
                .bind("runbus", RunbusProperties.class).get();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> RunsConfigFactory.of(bad.getRuns(), "c", null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("flow.rate")
                .hasMessageContaining("'fast'");
    }

    @Test
    void tracingThroughTheApplicationsOpenTelemetryBeanCarriesTheContextToTheListener() {
        Traced traced = new Traced();
        io.opentelemetry.api.OpenTelemetry propagating = io.opentelemetry.api.OpenTelemetry.propagating(
                io.opentelemetry.context.propagation.ContextPropagators.create(
                        io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator.getInstance()));
        String traceId = "0af7651916cd43dd8448eb211c80319c";
        runner.withPropertyValues("runbus.tracing=bean")
                .withBean(io.opentelemetry.api.OpenTelemetry.class, () -> propagating)
                .withBean(Traced.class, () -> traced).run(context -> {
                    assertThat(context).hasNotFailed();
                    io.opentelemetry.api.trace.Span parent = io.opentelemetry.api.trace.Span.wrap(
                            io.opentelemetry.api.trace.SpanContext.create(traceId, "b7ad6b7169203331",
                                    io.opentelemetry.api.trace.TraceFlags.getSampled(),
                                    io.opentelemetry.api.trace.TraceState.getDefault()));
                    try (io.opentelemetry.context.Scope ignored = parent.makeCurrent()) {
                        context.getBean(RunbusTemplate.class).publish("traced", "t", Map.of("a", 1));
                    }
                    Wait.until("received", Duration.ofSeconds(20), () -> !traced.headers.isEmpty());
                    assertThat(traced.headers.get(0).get("traceparent")).contains(traceId);
                });
    }

    @Test
    void tracingThroughABeanTheApplicationLacksFailsSayingSo() {
        runner.withPropertyValues("runbus.tracing=bean").run(context -> assertThat(context).hasFailed()
                .getFailure().rootCause().hasMessageContaining("runbus.tracing=bean needs one "
                        + "io.opentelemetry.api.OpenTelemetry bean"));
    }

    @Test
    void withoutRunbusRedisUrl_theUrlComesFromSpringDataRedis() {
        MockEnvironment env = new MockEnvironment().withProperty("spring.data.redis.host", "cache.internal")
                .withProperty("spring.data.redis.port", "6390").withProperty("spring.data.redis.database", "2")
                .withProperty("spring.data.redis.password", "s3cret").withProperty("spring.data.redis.ssl.enabled",
                        "true");
        RedisTarget target = RedisTarget.of(new RunbusProperties(), env);
        assertThat(target.url()).isEqualTo("rediss://cache.internal:6390/2");
        assertThat(new String(target.credentials().password())).isEqualTo("s3cret");

        MockEnvironment cluster = new MockEnvironment()
                .withProperty("spring.data.redis.cluster.nodes", "a:7000,b:7001");
        assertThat(RedisTarget.of(new RunbusProperties(), cluster).url()).isEqualTo("redis-cluster://a:7000,b:7001");

        MockEnvironment sentinel = new MockEnvironment().withProperty("spring.data.redis.sentinel.master", "main")
                .withProperty("spring.data.redis.sentinel.nodes", "s1:26379,s2:26379");
        assertThat(RedisTarget.of(new RunbusProperties(), sentinel).url())
                .isEqualTo("redis-sentinel://s1:26379,s2:26379/0#main");
    }

    @Test
    void theBusComesFromSpringDataRedisWhenRunbusHasNoUrl() {
        java.net.URI redis = java.net.URI.create(TestServers.redisUri());
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RunbusAutoConfiguration.class))
                .withPropertyValues("runbus.key-prefix=" + prefix, "spring.data.redis.host=" + redis.getHost(),
                        "spring.data.redis.port=" + redis.getPort())
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(Bus.class));
    }

    @Test
    void theBusRegistersItsMetersWithTheApplicationsRegistry() {
        io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        runner.withBean(io.micrometer.core.instrument.MeterRegistry.class, () -> registry).run(context -> {
            context.getBean(RunbusTemplate.class).publish("metered", "t", java.util.Map.of("a", 1));
            assertThat(registry.find("runbus.published").tag("topic", "metered").counter()).isNotNull()
                    .satisfies(c -> assertThat(c.count()).isEqualTo(1.0));
        });
    }

    @Test
    void beansBackOffWhenTheApplicationDefinesThem() {
        runner.withUserConfiguration(OwnBeans.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(Bus.class)).isSameAs(context.getBean(OwnBeans.class).bus);
            assertThat(context.getBean(RunbusTemplate.class)).isSameAs(context.getBean(OwnBeans.class).template);
            assertThat(context.getBean(PayloadJson.class)).isSameAs(OwnBeans.JSON);
        });
    }

    @Test
    void runsNeedTheFlagAndADataSource() {
        String schema = TestServers.newSchema("rbboot");
        try {
            runner.withUserConfiguration(Database.class).run(c -> assertThat(c).doesNotHaveBean(Runs.class));
            runner.withPropertyValues("runbus.runs.enabled=true")
                    .run(c -> assertThat(c).hasNotFailed().doesNotHaveBean(Runs.class));
            runner.withUserConfiguration(Database.class)
                    .withPropertyValues("runbus.runs.enabled=true", "runbus.runs.schema=" + schema)
                    .run(c -> {
                        assertThat(c).hasNotFailed().hasSingleBean(Runs.class);
                        assertThat(c.getBean(Runs.class).config().schema()).isEqualTo(schema);
                    });
        } finally {
            TestServers.dropSchema(schema);
        }
    }

    /** With a RunHandler bean, the worker's lifecycle starts a scheduler too, unless runbus.runs.scheduler=false. */
    @Test
    void theRunsWorkerStartsAScheduler_unlessTurnedOff() {
        String schema = TestServers.newSchema("rbsched");
        try {
            ApplicationContextRunner withRuns = runner.withUserConfiguration(Database.class, Handler.class)
                    .withPropertyValues("runbus.runs.enabled=true", "runbus.runs.schema=" + schema);
            withRuns.run(c -> {
                assertThat(c).hasNotFailed();
                dev.runbus.runs.Schedules schedules = c.getBean(Runs.class).schedules();
                assertThat(schedules.schedulerId()).isPresent();
                dev.runbus.testkit.Wait.until("the scheduler holds the lease", java.time.Duration.ofSeconds(30),
                        schedules::leader);
            });
            withRuns.withPropertyValues("runbus.runs.scheduler=false").run(c -> {
                assertThat(c).hasNotFailed();
                assertThat(c.getBean(Runs.class).schedules().schedulerId()).isEmpty();
            });
        } finally {
            TestServers.dropSchema(schema);
        }
    }

    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    static class Handler {
        @org.springframework.context.annotation.Bean
        dev.runbus.runs.RunHandler runHandler() {
            return run -> java.util.List.of(dev.runbus.runs.Reply.assistant("ok"));
        }
    }

    @Test
    void shutdownFlushesTheAcksOfEveryHandledEntry() {
        Handled handled = new Handled();
        int count = 50;
        runner.withBean(Handled.class, () -> handled).run(context -> {
            assertThat(context).hasNotFailed();
            RunbusTemplate template = context.getBean(RunbusTemplate.class);
            for (int i = 0; i < count; i++) {
                template.publish("acks", Message.of("t", ("" + i).getBytes(StandardCharsets.UTF_8)));
            }
            Wait.until("all handled", Duration.ofSeconds(20), () -> handled.entries.size() == count);
        }); // the context closes here: the listener stops and flushes its acks
        try (Bus bus = Bus.connect(BusConfig.builder(TestServers.redisUri()).keyPrefix(prefix).build())) {
            assertThat(bus.inspector().groups("acks")).singleElement()
                    .satisfies(g -> assertThat(g.pending()).isZero());
        }
    }

    @Test
    void healthIsDownWhenRedisStopsAnswering() {
        OwnRedis own = OwnRedis.process();
        boolean stopped = false;
        try {
            ApplicationContextRunner onOwn = runner.withPropertyValues("runbus.redis-url=" + own.uri(),
                    "runbus.command-timeout=1s");
            OwnRedis server = own;
            onOwn.withBean(Handled.class, Handled::new).run(context -> {
                RunbusHealthCheck check = new RunbusHealthCheck(context.getBean(Bus.class),
                        context.getBean(RunbusListenerContainer.class));
                assertThat(check.check().up()).isTrue();
                server.close();
                Wait.until("health DOWN", Duration.ofSeconds(20), () -> !check.check().up());
                assertThat(check.check().details()).containsKey("error");
                // The listener's read loop keeps failing and trying again: its last error is shown.
                Wait.until("a loop error", Duration.ofSeconds(20),
                        () -> check.check().details().containsKey("lastLoopErrors"));
            });
            stopped = true;
        } finally {
            if (!stopped) {
                own.close();
            }
        }
    }

    @Test
    void healthAnswersDownWithinItsTimeoutWhileRedisStalls() {
        TcpProxy proxy = TcpProxy.before(TestServers.redisUri());
        try {
            // Each Redis command may wait a minute: only the health timeout can make the check answer sooner.
            runner.withPropertyValues("runbus.redis-url=" + proxy.uri(), "runbus.command-timeout=60s",
                    "runbus.health.timeout=500ms").withBean(Handled.class, Handled::new).run(context -> {
                        RunbusHealthIndicator indicator = context.getBean(RunbusHealthIndicator.class);
                        assertThat(indicator.health().getStatus().getCode()).isEqualTo("UP");
                        proxy.pause(); // accepts, forwards nothing, answers nothing
                        for (int i = 0; i < 3; i++) {
                            var health = CompletableFuture.supplyAsync(indicator::health).get(20, TimeUnit.SECONDS);
                            assertThat(health.getStatus().getCode()).isEqualTo("DOWN");
                            assertThat(health.getDetails().get("error")).asString()
                                    .isEqualTo("Redis did not answer within 500 ms (runbus.health.timeout)");
                        }
                        // The checks made while the first one's reads wait join them rather than start more.
                        assertThat(Thread.getAllStackTraces().keySet().stream()
                                .filter(t -> t.getName().equals("runbus-health") && t.isAlive())).hasSize(1);
                        proxy.resume();
                        Wait.until("UP again", Duration.ofSeconds(20),
                                () -> indicator.health().getStatus().getCode().equals("UP"));
                    });
        } finally {
            proxy.close();
        }
    }

    /** Handles the "acks" topic and remembers what it handled. */
    static class Handled {
        final List<String> entries = new CopyOnWriteArrayList<>();

        @RunbusListener(topic = "acks", group = "g")
        void handle(Delivery d) {
            entries.add(d.streamId());
        }
    }

    /** Remembers the headers of what the "traced" topic delivers. */
    static class Traced {
        final List<Map<String, String>> headers = new CopyOnWriteArrayList<>();

        @RunbusListener(topic = "traced", group = "g")
        void handle(Message m) {
            headers.add(m.headers());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnBeans {
        static final PayloadJson JSON = new PayloadJson() {
            @Override
            public byte[] write(Object value) {
                return value.toString().getBytes(StandardCharsets.UTF_8);
            }

            @Override
            public Object read(byte[] json, java.lang.reflect.Type type) {
                return new String(json, StandardCharsets.UTF_8);
            }
        };
        final Bus bus = Bus.connect(BusConfig.builder(TestServers.redisUri()).keyPrefix(TestServers.newPrefix("rbboot"))
                .build());
        final RunbusTemplate template = new RunbusTemplate(bus.publisher(), JSON);

        @Bean(destroyMethod = "close")
        Bus myBus() {
            return bus;
        }

        @Bean
        RunbusTemplate myTemplate() {
            return template;
        }

        @Bean
        PayloadJson myJson() {
            return JSON;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Database {
        @Bean
        DataSource dataSource() {
            org.postgresql.ds.PGSimpleDataSource ds = new org.postgresql.ds.PGSimpleDataSource();
            ds.setURL(TestServers.databaseUrl());
            return ds;
        }
    }
}
