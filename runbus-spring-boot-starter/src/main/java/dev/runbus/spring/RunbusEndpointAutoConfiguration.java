package dev.runbus.spring;

import dev.runbus.Bus;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/** The {@code runbus} Actuator endpoint, when Actuator is present; exposed like any endpoint (management.*). */
@AutoConfiguration(after = RunbusAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
@ConditionalOnBean(Bus.class)
public class RunbusEndpointAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    public RunbusEndpoint runbusEndpoint(Bus bus, RunbusListenerContainer listeners) {
        return new RunbusEndpoint(bus, listeners);
    }
}
