package dev.runbus;

/** Hides credentials in URLs before they reach a message or a log. */
public final class Secrets {

    private Secrets() {
    }

    /**
     * {@code redis://user:secret@h} → {@code redis://user:****@h}, {@code redis://secret@h} →
     * {@code redis://****@h}, {@code password=secret} → {@code password=****}. Everything between the scheme and
     * the last {@code @} counts as credentials, so a password holding {@code /} or {@code @} is hidden whole; a
     * {@code password=} value ends at {@code &}, {@code ;} or whitespace (a message goes on after the URL).
     */
    public static String mask(String url) {
        if (url == null) {
            return null;
        }
        String out = url;
        int scheme = url.indexOf("://");
        int at = url.lastIndexOf('@');
        if (scheme >= 0 && at > scheme) {
            String userinfo = url.substring(scheme + 3, at);
            int colon = userinfo.indexOf(':');
            String user = colon >= 0 ? userinfo.substring(0, colon + 1) : "";
            out = url.substring(0, scheme + 3) + user + "****" + url.substring(at);
        }
        return out.replaceAll("(?i)(password=)[^&;\\s]*", "$1****");
    }
}
