package dev.runbus.server.embedded;

import java.security.SecureRandom;
import java.util.Base64;

/** The passwords the embedded servers are started with: new at every start, known only to this process. */
public final class EmbeddedPasswords {

    private static final SecureRandom RANDOM = new SecureRandom();

    private EmbeddedPasswords() {
    }

    /** 32 random bytes, base64url: a password nothing needs to escape in a config file or a URL. */
    public static String random() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }
}
