package dev.runbus.internal.scripts;

import dev.runbus.internal.redis.WireFormat;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * One Lua script from {@code resources/dev/runbus/lua}: its name, its text and the SHA-1 EVALSHA knows it by. How a
 * script is sent to Redis (EVAL, or FCALL of the function library made of all of them) is a {@link ScriptCalls}'s
 * business.
 */
public final class LuaScript {

    private final String name;
    private final String source;
    private final String sha;

    private LuaScript(String name, String source) {
        this.name = name;
        this.source = source;
        this.sha = sha1(source);
    }

    public static LuaScript load(String name) {
        String path = "/dev/runbus/lua/" + name + ".lua";
        try (InputStream in = LuaScript.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("missing script resource " + path);
            }
            return new LuaScript(name, new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read script resource " + path, e);
        }
    }

    /** A script of this text, not read from the resources: for tests of the library built from scripts. */
    static LuaScript of(String name, String source) {
        return new LuaScript(name, source);
    }

    String name() {
        return name;
    }

    String source() {
        return source;
    }

    String sha() {
        return sha;
    }

    /** Arguments as bytes: strings as UTF-8, numbers in decimal. */
    public static byte[][] args(Object... values) {
        byte[][] out = new byte[values.length][];
        for (int i = 0; i < values.length; i++) {
            out[i] = WireFormat.utf8(String.valueOf(values[i]));
        }
        return out;
    }

    private static String sha1(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required by every JVM", e);
        }
    }
}
