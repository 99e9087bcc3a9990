package dev.runbus.server;

import dev.runbus.FlowFairness;
import dev.runbus.FlowRate;
import dev.runbus.RetryPolicy;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The effective configuration: for each {@link Setting}, the value and where it came from. Flags over
 * environment over config file over defaults. {@link #validate()} checks them all at once before a command starts
 * anything; the readers check again, with errors naming the option.
 */
public final class Settings {

    /** Where a value came from, for {@code runbus config}. */
    public enum Source { FLAG, ENV, FILE, DEFAULT }

    private final Map<Setting, String> values = new EnumMap<>(Setting.class);
    private final Map<Setting, Source> sources = new EnumMap<>(Setting.class);
    private final Path configFile;

    private Settings(Path configFile) {
        this.configFile = configFile;
    }

    /**
     * @param flags      values given on the command line (absent keys were not given)
     * @param env        the process environment
     * @param configFile a properties file, or null
     */
    public static Settings resolve(Map<Setting, String> flags, Map<String, String> env, Path configFile) {
        Properties file = new Properties();
        if (configFile != null) {
            if (!Files.isRegularFile(configFile)) {
                throw new IllegalArgumentException("config file " + configFile + " does not exist");
            }
            try (InputStream in = Files.newInputStream(configFile)) {
                file.load(in);
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read config file " + configFile + ": " + e.getMessage(), e);
            }
            for (String key : file.stringPropertyNames()) {
                if (Setting.all().stream().noneMatch(s -> s.key().equals(key))) {
                    throw new IllegalArgumentException("unknown option '" + key + "' in config file " + configFile);
                }
            }
        }
        Settings s = new Settings(configFile);
        for (Setting setting : Setting.values()) {
            if (flags.containsKey(setting)) {
                s.put(setting, flags.get(setting), Source.FLAG);
            } else if (env.get(setting.envName()) != null && !env.get(setting.envName()).isBlank()) {
                // An empty variable (common in compose files) means "not set", not "empty": an empty
                // RUNBUS_DATABASE_URL must not quietly switch to an embedded database.
                s.put(setting, env.get(setting.envName()), Source.ENV);
            } else if (file.containsKey(setting.key())) {
                s.put(setting, file.getProperty(setting.key()), Source.FILE);
            } else {
                s.put(setting, setting.defaultValue(), Source.DEFAULT);
            }
        }
        return s;
    }

    /** These settings with other defaults: only values that came from the built-in defaults change. */
    public Settings withDefaults(Map<Setting, String> defaults) {
        return replacing(defaults, Source.DEFAULT, true);
    }

    /** These settings with some values replaced, as if given as flags. */
    public Settings with(Map<Setting, String> values) {
        return replacing(values, Source.FLAG, false);
    }

    /** A copy with {@code replacements} put in as {@code source}; with {@code onlyDefaults}, over defaults only. */
    private Settings replacing(Map<Setting, String> replacements, Source source, boolean onlyDefaults) {
        Settings s = new Settings(configFile);
        for (Setting setting : Setting.values()) {
            boolean replace = replacements.containsKey(setting)
                    && (!onlyDefaults || sources.get(setting) == Source.DEFAULT);
            if (replace) {
                s.put(setting, replacements.get(setting), source);
            } else {
                s.put(setting, values.get(setting), sources.get(setting));
            }
        }
        return s;
    }

    private void put(Setting setting, String value, Source source) {
        values.put(setting, value == null ? "" : value.trim());
        sources.put(setting, source);
    }

    public String get(Setting s) {
        return values.get(s);
    }

    public boolean isSet(Setting s) {
        return !values.get(s).isEmpty();
    }

    public Source source(Setting s) {
        return sources.get(s);
    }

    public Path configFile() {
        return configFile;
    }

    public int integer(Setting s, int min) {
        try {
            int v = Integer.parseInt(get(s));
            if (v < min) {
                throw new IllegalArgumentException("--" + s.key() + " must be at least " + min + ", got " + v);
            }
            return v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + s.key() + " must be a whole number, got '" + get(s) + "'");
        }
    }

    /** {@code true} or {@code false}, in any case. */
    public boolean bool(Setting s) {
        String v = get(s).toLowerCase(java.util.Locale.ROOT);
        if (v.equals("true") || v.equals("false")) {
            return Boolean.parseBoolean(v);
        }
        throw new IllegalArgumentException("--" + s.key() + " must be true or false, got '" + get(s) + "'");
    }

    public Duration duration(Setting s) {
        try {
            return parseDuration(get(s));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--" + s.key() + ": " + e.getMessage());
        }
    }

    /** An optional duration: empty when the setting is empty. */
    public java.util.Optional<Duration> optionalDuration(Setting s) {
        return get(s).isEmpty() ? java.util.Optional.empty() : java.util.Optional.of(duration(s));
    }

    /** A whole number of at least {@code min}, or -1 when the setting is empty. */
    public int optionalInteger(Setting s, int min) {
        return isSet(s) ? integer(s, min) : -1;
    }

    /** A flow rate, {@code PERMITS/PERIOD[,BURST]} ({@code 5/1s}, {@code 100/1m,20}), or null when it is empty. */
    public FlowRate flowRate(Setting s) {
        if (!isSet(s)) {
            return null;
        }
        try {
            return FlowRate.parse(get(s));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--" + s.key() + ": " + e.getMessage());
        }
    }

    /** {@code cost} or {@code handler-time}. */
    public FlowFairness flowFairness(Setting s) {
        return switch (get(s)) {
            case "cost" -> FlowFairness.BY_COST;
            case "handler-time" -> FlowFairness.BY_HANDLER_TIME;
            default -> throw new IllegalArgumentException("--" + s.key() + " must be cost or handler-time, got '"
                    + get(s) + "'");
        };
    }

    /** {@code on-idle}, {@code fixed:5s} or {@code exponential:1s,2,30s,0.2}. */
    public RetryPolicy retryPolicy(Setting s) {
        try {
            return parseRetryPolicy(get(s));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--" + s.key() + ": " + e.getMessage());
        }
    }

    static RetryPolicy parseRetryPolicy(String text) {
        String usage = "expected on-idle, fixed:DURATION or exponential:BASE,FACTOR,MAX,JITTER (e.g."
                + " exponential:1s,2,30s,0.2), got '" + text + "'";
        if (text.equals("on-idle")) {
            return RetryPolicy.onIdle();
        }
        if (text.startsWith("fixed:")) {
            return RetryPolicy.fixed(parseDuration(text.substring("fixed:".length())));
        }
        if (text.startsWith("exponential:")) {
            String[] p = text.substring("exponential:".length()).split(",", -1);
            if (p.length != 4) {
                throw new IllegalArgumentException(usage);
            }
            try {
                return RetryPolicy.exponential(parseDuration(p[0]), Double.parseDouble(p[1]), parseDuration(p[2]),
                        Double.parseDouble(p[3]));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(usage);
            }
        }
        throw new IllegalArgumentException(usage);
    }

    private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h)");

    /** {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h}. */
    public static Duration parseDuration(String text) {
        Matcher m = DURATION.matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException("expected a duration like 500ms, 30s, 2m or 1h, got '" + text + "'");
        }
        long n = Long.parseLong(m.group(1));
        switch (m.group(2)) {
            case "ms": return Duration.ofMillis(n);
            case "s": return Duration.ofSeconds(n);
            case "m": return Duration.ofMinutes(n);
            default: return Duration.ofHours(n);
        }
    }

    /**
     * Reads every typed setting (numbers, durations, booleans, the retry policy, files that must exist) and, once
     * those pass, what the commands read only when they have servers (the Redis URL and access, the passwords, the
     * database URL, the runs layer's configuration); throws one {@link IllegalArgumentException} naming all that
     * are wrong. Commands call it before they start anything, so that a typo costs nothing.
     */
    public void validate() {
        SettingChecks.validate(this);
    }

    /** Values for printing: passwords in URLs masked. */
    public Map<Setting, String> masked() {
        Map<Setting, String> out = new LinkedHashMap<>();
        for (Setting s : Setting.values()) {
            out.put(s, !s.isSecret() ? get(s) : get(s).contains("://") || get(s).startsWith("jdbc:") ? mask(get(s))
                    : get(s).isEmpty() ? "" : "****");
        }
        return out;
    }

    /**
     * {@code redis://:secret@h} → {@code redis://:****@h}, {@code redis://secret@h} → {@code redis://****@h};
     * {@code password=secret} → {@code password=****}.
     */
    public static String mask(String url) {
        return dev.runbus.Secrets.mask(url);
    }
}
