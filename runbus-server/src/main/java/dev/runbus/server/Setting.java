package dev.runbus.server;

import java.util.List;

/**
 * Every option of the {@code runbus} command, with its default, in one table. A value comes from the flag
 * ({@code --redis-url}), else the environment ({@code RUNBUS_REDIS_URL}), else the config file
 * ({@code redis-url=...}), else the default here.
 */
public enum Setting {
    REDIS_URL("redis-url", "", "Redis URL: redis://host:port, redis-sentinel://h:p,h:p#master or redis-cluster://h:p,h:p; empty starts an embedded Redis", true),
    REDIS_PASSWORD("redis-password", "", "Redis password, overriding the URL's; give it as RUNBUS_REDIS_PASSWORD or"
            + " in --redis-password-file, not as a flag (there is none), so it stays out of the process list", true),
    REDIS_PASSWORD_FILE("redis-password-file", "", "file whose first line is the Redis password", false),
    REDIS_TLS_CA("redis-tls-ca", "", "PEM file of the CA certificates that sign Redis's for rediss:// URLs;"
            + " empty: the JVM's trusted CAs", false),
    REDIS_SCRIPTS("redis-scripts", "auto", "how runbus runs its Lua scripts: auto (a function library, FCALL, on"
            + " Redis 7+ and Valkey; EVAL on 6.2), eval, or functions. Functions let the Redis users hold +fcall"
            + " instead of +eval +evalsha (runbus migrate --redis-url loads the library)", false),
    REDIS_TIMEOUT("redis-timeout", "10s", "how long one Redis command may take before it fails: an API call that"
            + " needs Redis then answers 503, a worker's loop reports the error and tries again", false),
    DATABASE_URL("database-url", "", "PostgreSQL JDBC URL; empty starts an embedded PostgreSQL", true),
    DATABASE_PASSWORD("database-password", "", "PostgreSQL password, overriding the URL's; give it as"
            + " RUNBUS_DATABASE_PASSWORD or in --database-password-file, not as a flag (there is none)", true),
    DATABASE_PASSWORD_FILE("database-password-file", "", "file whose first line is the PostgreSQL password", false),
    MIGRATE("migrate", "true", "create and upgrade the runs tables at start; false (--no-migrate) checks they are"
            + " there and current, for a role that may not create tables", false),
    EMBEDDED("embedded", "false", "serve may start the embedded Redis and PostgreSQL (no --redis-url or"
            + " --database-url) while listening beyond loopback; they are a development default", false),
    DATA_DIR("data-dir", "", "where embedded servers keep their data; empty: a temporary folder, deleted on exit", false),
    KEY_PREFIX("key-prefix", "runbus", "first part of every Redis key", false),
    SCHEMA("schema", "runbus", "PostgreSQL schema of the runs tables", false),
    TOPIC("topic", "runs", "topic of run triggers", false),
    GROUP("group", "run-workers", "consumer group of the workers", false),
    CONSUMER("consumer", "", "this process's consumer name, unique among live processes; empty: <host>-serve-<port> for serve, <host>-worker for worker", false),
    CONCURRENCY("concurrency", "64", "run handlers running at once per worker (ordered: partitions handled at once)",
            false),
    PARTITIONS("partitions", "1", "partitions of the runs topic; every process of a deployment must use the same "
            + "count, and it cannot change once the topic exists", false),
    ORDERED("ordered", "false", "runs of one user execute one at a time, in submission order (in parallel across "
            + "partitions)", false),
    MIN_IDLE("min-idle", "30s", "idle time before another worker takes a delivery over (and, with --retry on-idle,"
            + " before a failed run is retried)", false),
    RETRY("retry", "exponential:1s,2,30s,0.2", "when a failed run is tried again: exponential:BASE,FACTOR,MAX,JITTER"
            + " (after 1, 2, 4 ... 30 s, less up to 20%), fixed:DURATION, or on-idle (after --min-idle)", false),
    MAX_DELIVERIES("max-deliveries", "3", "attempts before a failing run is dead-lettered and failed"
            + " (counted in PostgreSQL too)", false),
    CLAIM_INTERVAL("claim-interval", "5s", "how often the reclaimer looks for idle deliveries", false),
    SWEEP_INTERVAL("sweep-interval", "30s", "how often the sweeper runs", false),
    METER_REFRESH("meter-refresh", "10s", "how often the gauges that need Redis or PostgreSQL (pending, lag, dead"
            + " letters, scheduled entries, run counts) are read for /metrics; a scrape reads the last values", false),
    SWEEP_THRESHOLD("sweep-threshold", "2m", "an unfinished run untouched this long is examined by the sweeper", false),
    RETENTION_AGE("retention-age", "1h", "stream entries every group acknowledged are trimmed once this old"
            + " (0s: at once); an entry a group still needs is never trimmed", false),
    DEAD_LETTER_RETENTION("dead-letter-retention", "", "dead letters older than this are trimmed; empty keeps"
            + " them until purged", false),
    SHUTDOWN_TIMEOUT("shutdown-timeout", "30s", "how long a graceful stop waits for running handlers", false),
    CANCEL_GRACE("cancel-grace", "10s", "how long a running run's handler may go on after it is told of its cancel"
            + " before its thread is interrupted (0s: at once)", false),
    EXECUTION_TIMEOUT("execution-timeout", "0s", "how long one attempt's handler may run when its run sets no timeout"
            + " of its own; then it is told to stop, interrupted after --cancel-grace, and the attempt fails"
            + " (0s: none)", false),
    FLOW_CAP("flow-cap", "", "flow control (docs/flow-control.md): at most this many runs of one flow key run at"
            + " once across the workers, the others waiting outside the stream; 0 holds every key back until a key's"
            + " own cap is set (runbus flow cap); empty: no cap per key. Give the flow settings to every process that"
            + " submits or works: a process without them submits runs without their flow key", false),
    FLOW_RATE("flow-rate", "", "flow control: the runs of one flow key start at most at this rate,"
            + " PERMITS/PERIOD[,BURST] (5/1s, 100/1m,20: 100 a minute, up to 20 at once; burst 1 by default);"
            + " empty: none", false),
    FLOW_TOPIC_CAP("flow-topic-cap", "", "flow control: at most this many runs with a flow key run at once in all,"
            + " shared fairly between the keys that wait (by weight: runbus flow weight); needs --partitions 1;"
            + " empty: none", false),
    FLOW_TOPIC_RATE("flow-topic-rate", "", "flow control: the runs with a flow key start at most at this rate in"
            + " all, PERMITS/PERIOD[,BURST] as --flow-rate, shared between the keys as --flow-topic-cap; needs"
            + " --partitions 1; empty: none", false),
    FLOW_FAIRNESS("flow-fairness", "cost", "what the fair shares of --flow-topic-cap and --flow-topic-rate count:"
            + " cost (each run 1) or handler-time (the time its handler ran, so that keys of equal weight get the"
            + " same worker time)", false),
    FLOW_PRIORITY_AGING("flow-priority-aging", "60s", "flow control: how long waiting is worth one step of a run's"
            + " priority (a run of priority p waits behind later, more urgent runs of its key at most (9 - p) times"
            + " this)", false),
    HANDLER("handler", "dev.runbus.server.DemoHandler", "class name of the RunHandler (public, no-argument constructor);"
            + " the default is the demo's echo, which serve takes only on the embedded servers: with --redis-url or"
            + " --database-url it needs a handler named", false),
    HANDLER_PATH("handler-path", "", "jars and folders of classes, separated by '" + java.io.File.pathSeparator
            + "', where --handler and what it uses are looked for besides runbus's own classes; empty: runbus's"
            + " classpath only", false),
    HOST("host", "127.0.0.1", "address serve listens on; any other than a loopback address needs API tokens or"
            + " --insecure-no-auth", false),
    PORT("port", "8080", "HTTP port of serve", false),
    API_TOKENS_FILE("api-tokens-file", "", "file of API tokens, one NAME:SCOPES:SHA256 line each (runbus token"
            + " create prints one; a file without one is an error); empty: no tokens", false),
    API_TOKENS("api-tokens", "", "API token lines as in the file, separated by spaces or ';', added to the file's;"
            + " as RUNBUS_API_TOKENS or in the config file, not as a flag (there is none), so that a token pasted by"
            + " mistake for its line stays out of the process list", false),
    INSECURE_NO_AUTH("insecure-no-auth", "false", "serve a non-loopback address without tokens: anyone who reaches"
            + " the port can submit, read and replay", false),
    TLS_CERT("tls-cert", "", "PEM certificate chain: serve HTTPS (with --tls-key)", false),
    TLS_KEY("tls-key", "", "PEM private key of --tls-cert", false),
    MAX_BODY("max-body", "65536", "largest accepted request body, bytes", false),
    MAX_HEADER_SIZE("max-header-size", "8192", "largest request line and headers, bytes", false),
    REQUEST_TIMEOUT("request-timeout", "10s", "a request body must arrive within this (from its first read), and"
            + " no single read of it waits longer", false),
    IDLE_TIMEOUT("idle-timeout", "30s", "a connection idle this long is closed", false),
    API_STATEMENT_TIMEOUT("api-statement-timeout", "5s", "the longest PostgreSQL may take over one read of runs"
            + " for the API and the dashboard (a listing, a run, its replies); past it the request answers 503 with"
            + " Retry-After. 0s: no limit", false),
    MAX_EVENT_STREAMS("max-event-streams", "16", "event streams open at once per token (per client address"
            + " without tokens); more answer 503", false),
    SUBMIT_RATE("submit-rate", "1000", "run submissions per second per token (per client address without tokens),"
            + " in bursts of up to as many; more answer 429 with Retry-After; 0: no limit", false),
    READ_RATE("read-rate", "100", "reads (GET) per second per token (per client address without tokens), in"
            + " bursts of up to as many; more answer 429 with Retry-After; 0: no limit", false),
    MAX_IN_FLIGHT_PER_CALLER("max-in-flight-per-caller", "32", "requests being answered at once per token (per"
            + " client address without tokens), event streams not counted; more answer 503 with Retry-After", false),
    MAX_IN_FLIGHT("max-in-flight", "128", "requests being answered at once in all, event streams not counted; more"
            + " answer 503 with Retry-After. Keep it well below Jetty's 250 threads, which also answer /health and"
            + " refusals", false),
    SIGN_IN_RATE("sign-in-rate", "10", "dashboard sign-in attempts per minute per client address, in bursts of up"
            + " to as many; more answer 429 with Retry-After; 0: no limit", false),
    PUBLIC_URL("public-url", "", "the URL browsers use to reach serve when a proxy in front of it terminates TLS or"
            + " rewrites Host (e.g. https://runbus.example.com): its origin is accepted for the dashboard's sign-in,"
            + " and an https URL makes the session cookie Secure and adds Strict-Transport-Security; empty: serve's"
            + " own address", false);

    private final String key;
    private final String defaultValue;
    private final String description;
    private final boolean secret;

    Setting(String key, String defaultValue, String description, boolean secret) {
        this.key = key;
        this.defaultValue = defaultValue;
        this.description = description;
        this.secret = secret;
    }

    /** The flag without dashes and the key in the config file, e.g. {@code redis-url}. */
    public String key() {
        return key;
    }

    /** {@code RUNBUS_REDIS_URL}. */
    public String envName() {
        return "RUNBUS_" + key.toUpperCase(java.util.Locale.ROOT).replace('-', '_');
    }

    public String defaultValue() {
        return defaultValue;
    }

    public String description() {
        return description;
    }

    public boolean isSecret() {
        return secret;
    }

    public static List<Setting> all() {
        return List.of(values());
    }
}
