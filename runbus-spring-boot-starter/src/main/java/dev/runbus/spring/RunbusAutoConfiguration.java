package dev.runbus.spring;

import dev.runbus.Bus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * The bus, the template and the listener container. Each backs off when the application defines a bean of its
 * type. Ordered after Boot's metrics so that the application's {@code MeterRegistry} gets runbus's meters.
 */
@AutoConfiguration(after = RunbusJsonAutoConfiguration.class, afterName = {
        "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"})
@EnableConfigurationProperties(RunbusProperties.class)
public class RunbusAutoConfiguration {

    private static final Logger log = LoggerFactory.getLogger(RunbusAutoConfiguration.class);
    private static final String METER_REGISTRY = "io.micrometer.core.instrument.MeterRegistry";

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public Bus runbusBus(RunbusProperties properties, Environment env, BeanFactory beans) {
        RedisTarget target = RedisTarget.of(properties, env);
        log.info("runbus: connecting to {} with key prefix {}", target.describe(), properties.getKeyPrefix());
        return Bus.connect(BusConfigFactory.of(properties, target, meterRegistry(beans),
                TracingChoice.of(properties.getTracing(), beans)));
    }

    /** The application's MeterRegistry, without loading Micrometer when it is absent (it is optional). */
    private static Object meterRegistry(BeanFactory beans) {
        if (!ClassUtils.isPresent(METER_REGISTRY, RunbusAutoConfiguration.class.getClassLoader())) {
            return null;
        }
        return MeterRegistryLookup.find(beans);
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(PayloadJson.class)
    public RunbusTemplate runbusTemplate(Bus bus, PayloadJson json) {
        return new RunbusTemplate(bus.publisher(), json);
    }

    @Bean
    static ListenerMethods runbusListenerMethods() {
        return new ListenerMethods();
    }

    @Bean
    @ConditionalOnMissingBean
    public RunbusListenerContainer runbusListenerContainer(Bus bus, ListenerMethods methods,
                                                           RunbusProperties properties, Environment env,
                                                           ObjectProvider<PayloadJson> json) {
        String consumer = ConsumerName.of(properties, env);
        return new RunbusListenerContainer(bus, () -> new ListenerEndpoints(properties, env, json.getIfAvailable(),
                consumer).of(methods.all()));
    }
}
