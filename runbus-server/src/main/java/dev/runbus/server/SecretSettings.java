package dev.runbus.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Passwords given apart from the URLs: in a setting (best from the environment, {@code RUNBUS_REDIS_PASSWORD}) or
 * as the first line of a file ({@code --redis-password-file}), never both. Neither reaches the process list, and
 * no error repeats a secret: they name the setting or the file.
 */
final class SecretSettings {

    private SecretSettings() {
    }

    /**
     * @param what for messages: {@code Redis}, {@code PostgreSQL}
     * @return the secret, or empty when neither is set (the URL's, if any, is used)
     * @throws IllegalArgumentException when both are set, or the file is missing, unreadable or has an empty
     *                                  first line
     */
    static Optional<String> read(Settings s, Setting value, Setting file, String what) {
        boolean inValue = s.isSet(value);
        boolean inFile = s.isSet(file);
        if (inValue && inFile) {
            throw new IllegalArgumentException("the " + what + " password is given twice: in " + value.envName()
                    + " and in --" + file.key() + " " + s.get(file) + "; give one");
        }
        if (inValue) {
            return Optional.of(s.get(value));
        }
        return inFile ? Optional.of(firstLine(Path.of(s.get(file)), "--" + file.key(), what)) : Optional.empty();
    }

    /**
     * The first line of a secret file, without its line end: a file written with {@code echo} ends in a newline
     * that is not part of the secret. Whatever follows the first line is ignored.
     */
    private static String firstLine(Path file, String option, String what) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException(option + " " + file + ": no such file");
        } catch (IOException | SecurityException e) {
            throw new IllegalArgumentException(option + " " + file + " cannot be read ("
                    + e.getClass().getSimpleName() + ")");
        }
        int end = text.indexOf('\n');
        String line = end < 0 ? text : text.substring(0, end);
        if (line.endsWith("\r")) {
            line = line.substring(0, line.length() - 1);
        }
        if (line.isEmpty()) {
            throw new IllegalArgumentException(option + " " + file + " is empty: its first line must be the " + what
                    + " password");
        }
        return line;
    }
}
