package dev.runbus.server.http;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * {@code --public-url}: the address browsers reach serve by when a proxy stands in front of it. Behind a proxy that
 * terminates TLS, serve itself sees plain HTTP, so without being told it would set the session cookie without
 * {@code Secure} and send no {@code Strict-Transport-Security}; behind one that rewrites {@code Host}, the sign-in
 * form's {@code Origin} (the public one) never equals the request's host, and the sign-in looks cross-site.
 *
 * @param origin {@code scheme://host[:port]}, lower case, as a browser writes it in {@code Origin}
 * @param https  whether browsers use HTTPS
 */
public record PublicUrl(String origin, boolean https) {

    /**
     * Reads {@code http(s)://host[:port]}, with at most a trailing {@code /}.
     *
     * @throws IllegalArgumentException naming the setting and what is wrong
     */
    public static PublicUrl parse(String value) {
        URI uri;
        try {
            uri = new URI(value.trim());
        } catch (URISyntaxException e) {
            throw wrong(value, "not a URL");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw wrong(value, "it must start with https:// or http://");
        }
        if (uri.getHost() == null || uri.getRawUserInfo() != null) {
            throw wrong(value, "it must name a host, without a user");
        }
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        if (!path.isEmpty() && !path.equals("/") || uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw wrong(value, "serve is reached at the root of its address: give no path, query or fragment");
        }
        int port = uri.getPort();
        boolean https = scheme.equals("https");
        boolean defaultPort = port < 0 || https && port == 443 || !https && port == 80;
        return new PublicUrl(scheme + "://" + uri.getHost().toLowerCase(Locale.ROOT) + (defaultPort ? "" : ":" + port),
                https);
    }

    /** Whether a request's {@code Origin} header names this address. */
    boolean isOrigin(String origin) {
        if (origin == null) {
            return false;
        }
        try {
            return parse(origin).origin.equals(this.origin);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static IllegalArgumentException wrong(String value, String why) {
        return new IllegalArgumentException("--public-url " + value + ": " + why);
    }
}
