package dev.runbus.internal.redis;

import dev.runbus.Secrets;
import io.lettuce.core.RedisURI;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the Redis URLs runbus accepts:
 *
 * <ul>
 *   <li>{@code redis://[[user:]password@]host[:port][/db]} and {@code rediss://…} (TLS): one server;</li>
 *   <li>{@code redis-sentinel://[[user:]password@]host[:port][,host[:port]…][/db]#masterName}: the master that
 *       the Sentinels name (Lettuce's form; port 26379 by default);</li>
 *   <li>{@code redis-cluster://[[user:]password@]host[:port][,host[:port]…]} and {@code rediss-cluster://…}:
 *       a Redis Cluster, found through any of the seed nodes given (port 6379 by default; database 0 only).</li>
 * </ul>
 *
 * Lettuce's query options ({@code ?timeout=…}, {@code &clientName=…}) pass through. Error messages never
 * repeat the URL's password.
 *
 * <p>Lettuce names itself on every connection with {@code CLIENT SETINFO lib-name} and {@code lib-ver} unless the
 * name and version are empty; runbus empties them (unless the URL sets Lettuce's {@code libraryName} or
 * {@code libraryVersion}), so that the ACL users of docs/security.md need no {@code +client|setinfo}: Redis 7.2
 * and later would deny it and log each denial, Redis 7.0 refuses the rule, and 6.2 has no such command.
 */
final class RedisUris {

    /** What a URL names: its seeds (one URI unless it is a cluster) and where, without credentials. */
    record Target(boolean cluster, List<RedisURI> seeds, String where) {
    }

    private RedisUris() {
    }

    static Target parse(String url) {
        if (url == null || url.isBlank()) {
            throw new IllegalArgumentException("the Redis URL is empty");
        }
        int colon = url.indexOf("://");
        String scheme = colon < 0 ? "" : url.substring(0, colon);
        int at = url.lastIndexOf('@');
        if (colon >= 0 && at > colon && url.substring(colon + 3, at).matches(".*[@/?#].*")) {
            throw new IllegalArgumentException("percent-encode '@', '/', '?' and '#' in a Redis URL's user name and"
                    + " password (%40, %2F, %3F, %23): " + Secrets.mask(url));
        }
        if (scheme.equals("redis-cluster") || scheme.equals("rediss-cluster")) {
            return cluster(scheme.startsWith("rediss") ? "rediss" : "redis", url.substring(colon + 3), url);
        }
        RedisURI uri = create(url, url);
        String where = uri.getSentinels().isEmpty() ? uri.getHost() + ":" + uri.getPort()
                : "Sentinels " + hosts(uri.getSentinels()) + ", master " + uri.getSentinelMasterId();
        return new Target(false, List.of(uri), where);
    }

    /** {@code rest} is what follows {@code scheme://}: {@code [userinfo@]hosts[/db][?query]}. */
    private static Target cluster(String scheme, String rest, String url) {
        int at = rest.lastIndexOf('@');
        String userinfo = at < 0 ? "" : rest.substring(0, at + 1);
        String afterUser = rest.substring(at + 1);
        int end = firstOf(afterUser, "/?");
        String hosts = afterUser.substring(0, end);
        String tail = afterUser.substring(end);
        if (tail.startsWith("/") && !tail.matches("/0?(\\?.*)?")) {
            throw new IllegalArgumentException("a Redis Cluster has database 0 only: " + Secrets.mask(url));
        }
        List<RedisURI> seeds = new ArrayList<>();
        for (String host : hosts.split(",")) {
            if (host.isBlank()) {
                throw new IllegalArgumentException("a host of the cluster URL is empty: " + Secrets.mask(url));
            }
            seeds.add(create(scheme + "://" + userinfo + host + tail, url));
        }
        return new Target(true, List.copyOf(seeds), "Redis Cluster " + hosts(seeds));
    }

    private static RedisURI create(String uri, String url) {
        RedisURI parsed;
        try {
            parsed = RedisURI.create(uri);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("not a Redis URL runbus reads (redis://, rediss://, "
                    + "redis-sentinel://…#master, redis-cluster://host:port,…): " + Secrets.mask(url));
        }
        // Lettuce takes these from the URI given, for the Sentinels and the master behind them too, and on a
        // cluster from the first seed for every node's connection: set here, they cover every connection.
        if (!hasOption(uri, RedisURI.PARAMETER_NAME_LIBRARY_NAME)) {
            parsed.setLibraryName("");
        }
        if (!hasOption(uri, RedisURI.PARAMETER_NAME_LIBRARY_VERSION)) {
            parsed.setLibraryVersion("");
        }
        return parsed;
    }

    /** Whether the URL's query sets Lettuce's option {@code name} (which Lettuce reads in any case). */
    private static boolean hasOption(String uri, String name) {
        int query = uri.indexOf('?');
        if (query < 0) {
            return false;
        }
        int fragment = uri.indexOf('#', query);
        String options = uri.substring(query + 1, fragment < 0 ? uri.length() : fragment);
        for (String option : options.split("[&;]")) {
            if (option.toLowerCase(java.util.Locale.ROOT).startsWith(name.toLowerCase(java.util.Locale.ROOT) + "=")) {
                return true;
            }
        }
        return false;
    }

    private static int firstOf(String s, String chars) {
        for (int i = 0; i < s.length(); i++) {
            if (chars.indexOf(s.charAt(i)) >= 0) {
                return i;
            }
        }
        return s.length();
    }

    private static String hosts(List<RedisURI> uris) {
        List<String> out = new ArrayList<>();
        uris.forEach(u -> out.add(u.getHost() + ":" + u.getPort()));
        return String.join(",", out);
    }
}
