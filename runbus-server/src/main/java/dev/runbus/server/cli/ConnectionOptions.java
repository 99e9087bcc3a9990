package dev.runbus.server.cli;

import dev.runbus.server.Setting;
import java.nio.file.Path;
import java.util.Map;
import picocli.CommandLine.Option;

/** Where the servers are and which keys and tables to use; every command has these. */
public final class ConnectionOptions {

    @Option(names = "--config", paramLabel = "FILE",
            description = "properties file with options (key=value, keys as the flags without dashes); "
                    + "default: RUNBUS_CONFIG, else ./runbus.properties if present")
    Path config;

    @Option(names = "--redis-url", paramLabel = "URL", description = "Redis URL: redis://host:port, "
            + "redis-sentinel://h:p,h:p#master or redis-cluster://h:p,h:p (env RUNBUS_REDIS_URL); "
            + "none: embedded Redis in demo and serve")
    String redisUrl;

    @Option(names = "--redis-password-file", paramLabel = "FILE", description = "file whose first line is the "
            + "Redis password, overriding the URL's (or env RUNBUS_REDIS_PASSWORD)")
    String redisPasswordFile;

    @Option(names = "--redis-tls-ca", paramLabel = "PEM", description = "CA certificates that sign Redis's, for "
            + "rediss://; default: the JVM's trusted CAs")
    String redisTlsCa;

    @Option(names = "--redis-scripts", paramLabel = "MODE", description = "auto (functions on Redis 7+ and Valkey, "
            + "EVAL on 6.2), eval or functions; default auto")
    String redisScripts;

    @Option(names = "--redis-timeout", paramLabel = "DURATION", description = "how long one Redis command may take "
            + "before it fails (an API call then answers 503); default 10s")
    String redisTimeout;

    @Option(names = "--database-password-file", paramLabel = "FILE", description = "file whose first line is the "
            + "PostgreSQL password, overriding the URL's (or env RUNBUS_DATABASE_PASSWORD)")
    String databasePasswordFile;

    @Option(names = "--database-url", paramLabel = "JDBC-URL", description = "PostgreSQL JDBC URL "
            + "(env RUNBUS_DATABASE_URL); none: embedded PostgreSQL in demo and serve")
    String databaseUrl;

    @Option(names = "--data-dir", paramLabel = "DIR", description = "data of embedded servers (env RUNBUS_DATA_DIR); "
            + "default: a temporary folder deleted on exit")
    String dataDir;

    @Option(names = "--key-prefix", paramLabel = "PREFIX", description = "Redis key prefix; default runbus")
    String keyPrefix;

    @Option(names = "--schema", paramLabel = "NAME", description = "PostgreSQL schema; default runbus")
    String schema;

    @Option(names = "--topic", paramLabel = "TOPIC", description = "topic of run triggers; default runs")
    String topic;

    @Option(names = "--group", paramLabel = "GROUP", description = "consumer group of the workers; default run-workers")
    String group;

    void collect(Map<Setting, String> flags) {
        put(flags, Setting.REDIS_URL, redisUrl);
        put(flags, Setting.REDIS_PASSWORD_FILE, redisPasswordFile);
        put(flags, Setting.REDIS_TLS_CA, redisTlsCa);
        put(flags, Setting.REDIS_SCRIPTS, redisScripts);
        put(flags, Setting.REDIS_TIMEOUT, redisTimeout);
        put(flags, Setting.DATABASE_URL, databaseUrl);
        put(flags, Setting.DATABASE_PASSWORD_FILE, databasePasswordFile);
        put(flags, Setting.DATA_DIR, dataDir);
        put(flags, Setting.KEY_PREFIX, keyPrefix);
        put(flags, Setting.SCHEMA, schema);
        put(flags, Setting.TOPIC, topic);
        put(flags, Setting.GROUP, group);
    }

    static void put(Map<Setting, String> flags, Setting s, Object value) {
        if (value != null) {
            flags.put(s, String.valueOf(value));
        }
    }
}
