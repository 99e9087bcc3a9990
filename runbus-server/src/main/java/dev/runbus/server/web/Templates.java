package dev.runbus.server.web;

import com.github.mustachejava.DefaultMustacheFactory;
import com.github.mustachejava.Mustache;
import com.github.mustachejava.MustacheFactory;
import java.io.StringWriter;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The dashboard's pages: Mustache templates from the jar ({@code dev/runbus/server/web/*.mustache}), compiled once
 * each. {@code {{value}}} escapes HTML, so text from Redis or PostgreSQL (a dead letter's reason, a reply) is shown
 * as text, never as markup; the templates use no unescaped form.
 */
final class Templates {

    private final MustacheFactory factory = new DefaultMustacheFactory("dev/runbus/server/web");
    private final Map<String, Mustache> compiled = new ConcurrentHashMap<>();

    String render(String name, Object model) {
        Mustache m = compiled.computeIfAbsent(name, n -> factory.compile(n + ".mustache"));
        StringWriter out = new StringWriter();
        m.execute(out, model);
        return out.toString();
    }
}
