package dev.runbus.server.web;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/** Values put into the pages' links, encoded for a query string or a path segment. */
final class Links {

    private Links() {
    }

    static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
