package dev.runbus.server;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * What the {@code runbus} command reads from outside its arguments: the environment variables and the
 * working directory (where {@code ./runbus.properties} is looked for). An input, not a global, so that a
 * test can hand the command an empty environment and a folder without a config file instead of the
 * developer's own {@code RUNBUS_*} variables and files.
 *
 * @param variables        environment variables
 * @param workingDirectory the folder relative paths and {@code ./runbus.properties} are resolved against
 */
public record Environment(Map<String, String> variables, Path workingDirectory) {

    /** The config file looked for in the working directory when neither --config nor RUNBUS_CONFIG is given. */
    public static final String DEFAULT_CONFIG_FILE = "runbus.properties";

    public Environment {
        variables = Map.copyOf(variables);
        workingDirectory = workingDirectory.toAbsolutePath();
    }

    /** This process's environment and working directory. */
    public static Environment system() {
        return new Environment(System.getenv(), Path.of(""));
    }

    /** A variable's value, or null when it is unset or blank (compose files often leave variables empty). */
    public String get(String name) {
        String v = variables.get(name);
        return v == null || v.isBlank() ? null : v;
    }

    /** The config file: the flag's, else RUNBUS_CONFIG, else {@code ./runbus.properties} if present, else null. */
    public Path configFile(Path flag) {
        if (flag != null) {
            return workingDirectory.resolve(flag);
        }
        String named = get("RUNBUS_CONFIG");
        if (named != null) {
            return workingDirectory.resolve(named);
        }
        Path local = workingDirectory.resolve(DEFAULT_CONFIG_FILE);
        return Files.isRegularFile(local) ? local : null;
    }

    /**
     * The environment of a child {@code runbus} process that must run with these settings and nothing else:
     * every {@code RUNBUS_*} variable of this environment removed (RUNBUS_CONFIG included, so no file is read
     * unless the child's working directory has one), then each setting that has a value passed as its
     * variable. Passing them as variables, not flags, keeps passwords in URLs out of the process list.
     */
    public Map<String, String> forChild(Settings settings) {
        Map<String, String> out = new HashMap<>(variables);
        out.keySet().removeIf(name -> name.startsWith("RUNBUS_") && !name.equals("RUNBUS_LOG_LEVEL")
                && !name.equals("RUNBUS_LOG_FORMAT"));
        for (Setting s : Setting.values()) {
            if (settings.isSet(s)) {
                out.put(s.envName(), settings.get(s));
            }
        }
        return out;
    }
}
