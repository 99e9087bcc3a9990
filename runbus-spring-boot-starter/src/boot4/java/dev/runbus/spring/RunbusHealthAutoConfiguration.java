package dev.runbus.spring;

import dev.runbus.Bus;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/** The {@code runbus} health indicator, when Actuator's health module is present (Boot 4). */
@AutoConfiguration(after = RunbusAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
@ConditionalOnBean(Bus.class)
public class RunbusHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "runbusHealthIndicator")
    public RunbusHealthIndicator runbusHealthIndicator(Bus bus, RunbusListenerContainer listeners,
                                                       RunbusProperties properties) {
        return new RunbusHealthIndicator(new RunbusHealthCheck(bus, listeners,
                properties.getHealth().getTimeout()));
    }
}
