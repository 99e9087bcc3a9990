package dev.runbus.spring;

import dev.runbus.RedisCredentials;
import java.util.List;
import java.util.Locale;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * Where the bus connects: {@code runbus.redis-url}, or else what Spring Boot's own {@code spring.data.redis.*}
 * settings describe, so that an application with Redis configured needs no new property. Read from the
 * {@link Environment} rather than through Boot's Redis properties class, whose package differs between Boot 3 and
 * Boot 4 and which exists only with spring-boot-data-redis on the classpath.
 *
 * @param url         the runbus URL
 * @param credentials user and password given apart from the URL (so that no character needs escaping), or null
 */
record RedisTarget(String url, RedisCredentials credentials) {

    private static final String SPRING = "spring.data.redis.";

    static RedisTarget of(RunbusProperties properties, Environment env) {
        if (properties.getRedisUrl() != null && !properties.getRedisUrl().isBlank()) {
            return new RedisTarget(properties.getRedisUrl(), null);
        }
        return fromSpringData(env);
    }

    static RedisTarget fromSpringData(Environment env) {
        Binder binder = Binder.get(env);
        RedisCredentials credentials = credentials(env.getProperty(SPRING + "username"),
                env.getProperty(SPRING + "password"));
        String url = env.getProperty(SPRING + "url");
        if (url != null && !url.isBlank()) {
            return new RedisTarget(url, credentials);
        }
        boolean ssl = env.getProperty(SPRING + "ssl.enabled", Boolean.class, false);
        String database = env.getProperty(SPRING + "database", "0");
        List<String> clusterNodes = nodes(binder, SPRING + "cluster.nodes");
        if (!clusterNodes.isEmpty()) {
            return new RedisTarget((ssl ? "rediss-cluster://" : "redis-cluster://") + String.join(",", clusterNodes),
                    credentials);
        }
        String master = env.getProperty(SPRING + "sentinel.master");
        List<String> sentinels = nodes(binder, SPRING + "sentinel.nodes");
        if (master != null && !sentinels.isEmpty()) {
            return new RedisTarget("redis-sentinel://" + String.join(",", sentinels) + "/" + database + "#" + master,
                    credentials);
        }
        String host = env.getProperty(SPRING + "host", "localhost");
        String port = env.getProperty(SPRING + "port", "6379");
        return new RedisTarget((ssl ? "rediss://" : "redis://") + host + ":" + port + "/" + database, credentials);
    }

    private static List<String> nodes(Binder binder, String name) {
        return binder.bind(name, Bindable.listOf(String.class)).orElse(List.of()).stream()
                .map(String::trim).filter(s -> !s.isEmpty()).toList();
    }

    private static RedisCredentials credentials(String user, String password) {
        if (password == null || password.isEmpty()) {
            return null;
        }
        char[] secret = password.toCharArray();
        return user == null || user.isBlank() ? RedisCredentials.password(secret) : RedisCredentials.of(user, secret);
    }

    /** The URL without a password, for logs and the endpoint. */
    String describe() {
        return url.replaceAll("(?i)(rediss?(-cluster|-sentinel)?://)[^@/]*@", "$1***@").toLowerCase(Locale.ROOT);
    }
}
