package dev.runbus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.TestServers;
import dev.runbus.testkit.Wait;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import redis.embedded.RedisServer;

/**
 * docs/spring-boot.md's recipe for an application's tests without Docker, as written there: an embedded Redis on a
 * free loopback port, started before the context and stopped after it, and a key prefix per test class. A listener
 * receives what the template publishes.
 */
@ExtendWith(EmbeddedRedisRecipeTest.StopRedis.class) // before @SpringBootTest: stops Redis after Spring closed the context
@SpringBootTest(classes = EmbeddedRedisRecipeTest.App.class)
@DirtiesContext
class EmbeddedRedisRecipeTest {

    static RedisServer redis;   // com.github.codemonstur:embedded-redis, test scope

    @DynamicPropertySource
    static void runbus(DynamicPropertyRegistry registry) throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0, 0, InetAddress.getLoopbackAddress())) { port = s.getLocalPort(); }
        redis = new RedisServer(port);
        redis.start();
        registry.add("runbus.redis-url", () -> "redis://127.0.0.1:" + port);
        registry.add("runbus.key-prefix", () -> "test-" + UUID.randomUUID().toString().substring(0, 8));
        // Not part of the recipe: this module's tests have JDBC on the class path, so Boot wants a data source.
        registry.add("spring.datasource.url", TestServers::databaseUrl);
        registry.add("spring.flyway.enabled", () -> "false");
    }

    /**
     * Stops Redis once the context is closed. Extensions' afterAll callbacks run in the reverse of their order on the
     * class, so this one, declared before {@code @SpringBootTest}, runs after Spring's, which closes the context
     * ({@code @DirtiesContext}). A plain {@code @AfterAll} method runs before both: the bus would then close
     * against a stopped Redis and wait out its timeouts.
     */
    static final class StopRedis implements AfterAllCallback {
        @Override
        public void afterAll(ExtensionContext context) throws IOException { redis.stop(); }
    }

    /** The payload the greeter reads. */
    public record Greeting(String name) {
    }

    @SpringBootApplication
    static class App {
        final List<String> greeted = new CopyOnWriteArrayList<>();

        @RunbusListener(topic = "greetings", group = "greeter")
        void greet(Greeting g) {
            greeted.add(g.name());
        }
    }

    @Autowired
    App app;

    @Autowired
    RunbusTemplate template;

    @Test
    void aListenerReceivesWhatTheTemplatePublishes() {
        template.publish("greetings", "greeting", new Greeting("ada"));
        Wait.until("greeted", Duration.ofSeconds(20), () -> app.greeted.contains("ada"));
        assertThat(app.greeted).containsExactly("ada");
    }
}
