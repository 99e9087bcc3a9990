package dev.runbus.internal;

/** Hides credentials in URLs before they reach a message or a log. */
public final class Secrets {

    private Secrets() {
    }

    /**
     * {@code redis://user:secret@h} → {@code redis://user:****@h}, {@code redis://secret@h} →
     * {@code redis://****@h}, {@code password=secret} → {@code password=****}.
     */
    public static String mask(String url) {
        if (url == null) {
            return null;
        }
        String out = url.replaceAll("(://[^:/@]*:)[^@/]*@", "$1****@");
        out = out.replaceAll("(://)[^:/@]+@", "$1****@");
        return out.replaceAll("(?i)(password=)[^&;]*", "$1****");
    }
}
