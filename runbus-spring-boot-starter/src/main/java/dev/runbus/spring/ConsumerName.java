package dev.runbus.spring;

import java.net.InetAddress;
import java.net.UnknownHostException;
import org.springframework.core.env.Environment;

/**
 * This application's consumer name: {@code runbus.consumer}, else {@code spring.application.name} and the host
 * name, else the host name. Stable across restarts of one host (so a restarted process takes back its own pending
 * entries at once) and different between hosts.
 */
final class ConsumerName {

    private ConsumerName() {
    }

    static String of(RunbusProperties properties, Environment env) {
        if (properties.getConsumer() != null && !properties.getConsumer().isBlank()) {
            return properties.getConsumer().trim();
        }
        String app = env.getProperty("spring.application.name");
        String host = hostName();
        String name = app == null || app.isBlank() ? host : app.trim() + "-" + host;
        return name.replaceAll("\\s+", "-");
    }

    private static String hostName() {
        String fromEnv = System.getenv("HOSTNAME");
        if (fromEnv != null && !fromEnv.isBlank()) {
            return fromEnv;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "localhost";
        }
    }
}
