package dev.runbus.spring;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@link PayloadJson} of listeners and the template, on Boot 3: the application's Jackson {@code ObjectMapper},
 * else a mapper of its own.
 */
@AutoConfiguration(afterName = "org.springframework.boot.autoconfigure.jackson.JacksonAutoConfiguration")
@ConditionalOnClass(name = "com.fasterxml.jackson.databind.ObjectMapper")
public class RunbusJsonAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(PayloadJson.class)
    PayloadJson runbusPayloadJson(ObjectProvider<ObjectMapper> mapper) {
        return new Jackson2PayloadJson(mapper.getIfAvailable(() -> new ObjectMapper().findAndRegisterModules()));
    }
}
