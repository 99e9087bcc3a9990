package dev.runbus.spring;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.BeanFactory;

/** Loaded only when Micrometer is on the classpath: the application's registry, if it has one. */
final class MeterRegistryLookup {

    private MeterRegistryLookup() {
    }

    static Object find(BeanFactory beans) {
        return beans.getBeanProvider(MeterRegistry.class).getIfUnique();
    }
}
