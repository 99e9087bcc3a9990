package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.testkit.RedisTarget;
import java.io.File;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * micrometer-core is an optional dependency: on a class path without it, a bus configured without a meter registry
 * connects, publishes, delivers and closes, and nothing asks for a Micrometer class.
 */
class WithoutMicrometerTest {

    private final String prefix = "test-no-micrometer-" + UUID.randomUUID();

    @AfterEach
    void cleanUp() {
        RedisTarget.local().deleteKeys(prefix);
    }

    @Test
    void aBusWithoutARegistryRunsWithoutMicrometerOnTheClassPath() throws Exception {
        try (URLClassLoader loader = new URLClassLoader(classPathWithoutMicrometer(),
                ClassLoader.getPlatformClassLoader())) {
            assertThatThrownBy(() -> loader.loadClass("io.micrometer.core.instrument.MeterRegistry"))
                    .isInstanceOf(ClassNotFoundException.class);
            Class<?> busConfig = loader.loadClass(BusConfig.class.getName());
            Object builder = busConfig.getMethod("builder", String.class).invoke(null, RedisTarget.local().uri());
            Class<?> builderClass = builder.getClass();
            assertThat(builderClass.getMethods()).as("reflection over the builder needs no Micrometer").isNotEmpty();
            builderClass.getMethod("keyPrefix", String.class).invoke(builder, prefix);
            Object config = builderClass.getMethod("build").invoke(builder);
            assertThat(config.toString()).contains("meterRegistry=null");
            assertThat(config.equals(config)).isTrue();
            assertThat(config.hashCode()).isEqualTo(config.hashCode());

            Class<?> busClass = loader.loadClass(Bus.class.getName());
            // Lettuce's flight-recorder events are JVM-wide: a second Lettuce in another class loader cannot make its own.
            String jfr = System.setProperty("io.lettuce.core.jfr", "false");
            Object bus;
            try {
                bus = busClass.getMethod("connect", busConfig).invoke(null, config);
            } finally {
                if (jfr == null) {
                    System.clearProperty("io.lettuce.core.jfr");
                } else {
                    System.setProperty("io.lettuce.core.jfr", jfr);
                }
            }
            try {
                CountDownLatch delivered = new CountDownLatch(1);
                Class<?> handlerClass = loader.loadClass(Handler.class.getName());
                Object handler = Proxy.newProxyInstance(loader, new Class<?>[] {handlerClass}, (proxy, m, args) -> {
                    if (m.getName().equals("handle")) {
                        delivered.countDown();
                    }
                    return null;
                });
                Class<?> options = loader.loadClass(SubscribeOptions.class.getName());
                busClass.getMethod("subscribe", String.class, String.class, String.class, handlerClass, options)
                        .invoke(bus, "t", "g", "c", handler, options.getMethod("builder").invoke(null).getClass()
                                .getMethod("build").invoke(options.getMethod("builder").invoke(null)));
                Object publisher = busClass.getMethod("publisher").invoke(bus);
                Class<?> messageClass = loader.loadClass(Message.class.getName());
                Object message = messageClass.getMethod("of", String.class, byte[].class)
                        .invoke(null, "x", "hello".getBytes(StandardCharsets.UTF_8));
                Method publish = loader.loadClass(Publisher.class.getName())
                        .getMethod("publish", String.class, messageClass);
                publish.invoke(publisher, "t", message);
                assertThat(delivered.await(20, TimeUnit.SECONDS)).as("delivered").isTrue();
            } finally {
                busClass.getMethod("close").invoke(bus);
            }
        }
    }

    /** The test's class path (surefire passes it apart from its own booter jar), Micrometer's jars left out. */
    private static URL[] classPathWithoutMicrometer() throws Exception {
        String path = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<URL> urls = new ArrayList<>();
        for (String entry : path.split(File.pathSeparator)) {
            if (!entry.isEmpty() && !new File(entry).getName().startsWith("micrometer-")) {
                urls.add(new File(entry).toURI().toURL());
            }
        }
        return urls.toArray(new URL[0]);
    }
}
