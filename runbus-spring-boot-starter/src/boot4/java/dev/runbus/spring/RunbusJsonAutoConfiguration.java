package dev.runbus.spring;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@link PayloadJson} of listeners and the template, on Boot 4: the application's Jackson 3 mapper when it
 * has one (Boot 4's default), else its Jackson 2 {@code ObjectMapper}, else a mapper of its own.
 */
@AutoConfiguration(afterName = {"org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration",
        "org.springframework.boot.jackson2.autoconfigure.Jackson2AutoConfiguration"})
public class RunbusJsonAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "tools.jackson.databind.ObjectMapper")
    static class Jackson3 {

        @Bean
        @ConditionalOnMissingBean(PayloadJson.class)
        PayloadJson runbusPayloadJson(ObjectProvider<tools.jackson.databind.ObjectMapper> mapper) {
            return new Jackson3PayloadJson(mapper.getIfAvailable(tools.jackson.databind.json.JsonMapper::new));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "com.fasterxml.jackson.databind.ObjectMapper")
    static class Jackson2 {

        @Bean
        @ConditionalOnMissingBean(PayloadJson.class)
        PayloadJson runbusPayloadJson(ObjectProvider<com.fasterxml.jackson.databind.ObjectMapper> mapper) {
            return new Jackson2PayloadJson(mapper.getIfAvailable(
                    () -> new com.fasterxml.jackson.databind.ObjectMapper().findAndRegisterModules()));
        }
    }
}
