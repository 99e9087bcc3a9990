package dev.runbus.bench;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Delivery;
import dev.runbus.spring.RunbusAutoConfiguration;
import dev.runbus.spring.RunbusListener;
import java.util.Map;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;

/**
 * runbus through the Spring Boot starter: each measurement starts a Spring context whose C listener beans each
 * have one {@link RunbusListener} method, so that C subscriptions of concurrency 1 consume, as the plain runbus
 * contender's C subscriptions do. What differs is the starter's path (the annotation's endpoint, the reflective
 * call with the argument resolved from the delivery), which is what this contender measures. The context starts
 * before the measurement, as the other contenders' clients do, and uses one bus for all measurements as the plain
 * contender does (given as a bean, so the starter's own backs off): a new bus per measurement would measure cold
 * connections and loops instead of the listener.
 */
final class ListenerContender implements Contender {

    static final String NAME = "runbus @RunbusListener";

    private final String redisUri;
    private final String prefix;
    private Bus bus;

    ListenerContender(String redisUri, String prefix) {
        this.redisUri = redisUri;
        this.prefix = prefix;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String describe() {
        return "runbus-spring-boot-starter: C beans with a @RunbusListener(Delivery) method, concurrency 1 each,"
                + " batch 100, block 100 ms, in a Spring context started before the measurement";
    }

    @Override
    public String keyPrefix() {
        return prefix;
    }

    @Override
    public Consumers start(Target target, int consumers, Probe probe) {
        SpringApplicationBuilder app = new SpringApplicationBuilder(Config.class)
                .web(WebApplicationType.NONE)
                .logStartupInfo(false)
                .properties(Map.of("runbus.consumer", "listener", "runbus.listener.concurrency", "1",
                        "runbus.listener.block-time", "100ms", "bench.topic", target.topic(),
                        "bench.group", target.group(), "spring.main.banner-mode", "off",
                        "logging.level.root", "warn"))
                .initializers(ctx -> {
                    ctx.getBeanFactory().registerSingleton("runbusBus", bus()); // not closed with the context
                    // Registered as definitions, not singletons, so that the starter's post-processor finds them.
                    for (int i = 0; i < consumers; i++) {
                        ((GenericApplicationContext) ctx).registerBean("listener" + i, Listener.class,
                                () -> new Listener(probe));
                    }
                });
        ConfigurableApplicationContext context = app.run();
        return context::close;
    }

    private synchronized Bus bus() {
        if (bus == null) {
            bus = Bus.connect(BusConfig.builder(redisUri).keyPrefix(prefix).build());
        }
        return bus;
    }

    @Override
    public synchronized void close() {
        // each measurement's context is closed by its Consumers; the bus lives as long as the contender
        if (bus != null) {
            bus.close();
            bus = null;
        }
    }

    @ImportAutoConfiguration(RunbusAutoConfiguration.class)
    static class Config {
    }

    /** One listener: counts, as the plain contender's handler does. */
    static final class Listener {
        private final Probe probe;

        Listener(Probe probe) {
            this.probe = probe;
        }

        @RunbusListener(topic = "${bench.topic}", group = "${bench.group}")
        void handle(Delivery delivery) {
            probe.handled();
        }
    }
}
