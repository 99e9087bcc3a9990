package dev.runbus.server.web;

import io.javalin.http.Context;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@code /assets/{file}}: the dashboard's script and style sheet, and uPlot's from its webjar, from the jar (the
 * dashboard works offline). A fixed list: no path from a request reaches the class path. Open to all, like any
 * site's scripts: they hold no data.
 */
final class Assets {

    private static final String UPLOT = "/META-INF/resources/webjars/uplot/" + uplotVersion() + "/dist/";

    private record Asset(String resource, String type) {
    }

    private static final Map<String, Asset> FILES = Map.of(
            "dashboard.js", new Asset("/dev/runbus/server/web/dashboard.js", "text/javascript; charset=utf-8"),
            "dashboard.css", new Asset("/dev/runbus/server/web/dashboard.css", "text/css; charset=utf-8"),
            "uPlot.js", new Asset(UPLOT + "uPlot.iife.min.js", "text/javascript; charset=utf-8"),
            "uPlot.css", new Asset(UPLOT + "uPlot.min.css", "text/css; charset=utf-8"));

    /** Each file read from the jar once, on its first request. */
    private static final Map<String, byte[]> READ = new ConcurrentHashMap<>();

    private Assets() {
    }

    static void serve(Context ctx) {
        Asset a = FILES.get(ctx.pathParam("file"));
        if (a == null) {
            ctx.status(404).result("");
            return;
        }
        ctx.header("Cache-Control", "max-age=3600");
        ctx.header("X-Content-Type-Options", "nosniff");
        ctx.contentType(a.type()).result(READ.computeIfAbsent(a.resource(), Assets::read));
    }

    private static byte[] read(String resource) {
        try (InputStream in = Assets.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("the jar lacks " + resource);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The uPlot webjar's version, from its Maven metadata in the jar. */
    private static String uplotVersion() {
        try (InputStream in = Assets.class.getResourceAsStream("/META-INF/maven/org.webjars.npm/uplot/pom.properties")) {
            if (in == null) {
                throw new IllegalStateException("the uPlot webjar is not on the class path");
            }
            java.util.Properties p = new java.util.Properties();
            p.load(in);
            return p.getProperty("version");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
