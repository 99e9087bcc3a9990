package dev.runbus.server;

import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code --handler-path}: the jars and folders where a deployment's own {@code RunHandler} lives, so that
 * {@code java -jar runbus.jar serve --handler com.acme.Billing --handler-path billing.jar} runs it ({@code java
 * -jar} ignores {@code -cp}). runbus's own classes come first (parent-first), so a handler jar that bundles its
 * own copy of runbus or its libraries still shares runbus's.
 */
public final class HandlerPath {

    private HandlerPath() {
    }

    /** The entries of a path, split on the platform's separator; none for an empty path. */
    public static List<String> entries(String path) {
        List<String> out = new ArrayList<>();
        for (String e : path.split(java.util.regex.Pattern.quote(java.io.File.pathSeparator))) {
            if (!e.isBlank()) {
                out.add(e.trim());
            }
        }
        return out;
    }

    /** A loader over the path's entries whose parent is runbus's own; runbus's own loader for an empty path. */
    public static ClassLoader loader(String path) {
        ClassLoader runbus = HandlerPath.class.getClassLoader();
        List<String> entries = entries(path);
        if (entries.isEmpty()) {
            return runbus;
        }
        URL[] urls = new URL[entries.size()];
        for (int i = 0; i < urls.length; i++) {
            try {
                urls[i] = Path.of(entries.get(i)).toAbsolutePath().toUri().toURL();
            } catch (MalformedURLException e) {
                throw new IllegalArgumentException("--handler-path: " + entries.get(i) + " is no jar or folder", e);
            }
        }
        // Lives as long as the process: the handler's classes are in use until it exits.
        return new URLClassLoader("runbus-handler-path", urls, runbus);
    }
}
