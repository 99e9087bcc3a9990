package dev.runbus.server.http;

import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The tokens a server accepts, read from {@code --api-tokens-file} and the {@code api-tokens} setting
 * ({@code RUNBUS_API_TOKENS} or the config file; no flag, so that a token pasted by mistake in place of its line
 * never shows in the process list). One token per line: {@code NAME:SCOPE[,SCOPE…]:SHA256-HEX}, where the hash is the
 * SHA-256 of the token's text; blank lines and lines starting with {@code #} are skipped. Only hashes are kept,
 * so a leaked file grants nothing; rotating a token is adding the new line, moving clients, removing the old
 * line, and restarting.
 */
public final class ApiTokens {

    /** Every token starts with this, so that a secret scanner (and a human) can tell what it is. */
    public static final String PREFIX = "rbt_";

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}");
    private static final Pattern HASH = Pattern.compile("[0-9a-fA-F]{64}");

    private final List<ApiToken> tokens;

    private ApiTokens(List<ApiToken> tokens) {
        this.tokens = List.copyOf(tokens);
    }

    /** The tokens the settings give; an unreadable file or a malformed line is an error naming where. */
    public static ApiTokens load(Settings s) {
        List<ApiToken> out = new ArrayList<>();
        if (s.isSet(Setting.API_TOKENS_FILE)) {
            Path file = Path.of(s.get(Setting.API_TOKENS_FILE));
            List<String> lines;
            try {
                lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new IllegalArgumentException("--api-tokens-file " + file + " cannot be read: " + e);
            }
            parse(lines, "--api-tokens-file " + file, out);
            // A file meant to hold tokens and holding none would otherwise serve loopback without any, silently.
            if (out.isEmpty()) {
                throw new IllegalArgumentException("--api-tokens-file " + file + " has no token lines, only comments"
                        + " or blank lines: add one (runbus token create prints it), or leave the option out to serve"
                        + " loopback without tokens");
            }
        }
        if (s.isSet(Setting.API_TOKENS)) {
            String where = s.source(Setting.API_TOKENS) == Settings.Source.ENV ? Setting.API_TOKENS.envName()
                    : Setting.API_TOKENS.key() + " in the config file";
            parse(List.of(s.get(Setting.API_TOKENS).split("[;\\s]+")), where, out);
        }
        return new ApiTokens(out);
    }

    public static ApiTokens parse(List<String> lines, String source) {
        List<ApiToken> out = new ArrayList<>();
        parse(lines, source, out);
        return new ApiTokens(out);
    }

    private static void parse(List<String> lines, String source, List<ApiToken> out) {
        Set<String> names = new HashSet<>();
        Set<String> hashes = new HashSet<>();
        out.forEach(t -> {
            names.add(t.name());
            hashes.add(HexFormat.of().formatHex(t.sha256()));
        });
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).trim();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            // The line is never repeated in the message: a secret pasted where its hash belongs stays unprinted.
            String where = source + " line " + (i + 1) + ": ";
            if (line.startsWith(PREFIX) && line.indexOf(':') < 0) {
                throw new IllegalArgumentException(where + "this is a token, not a token line: give"
                        + " NAME:SCOPES:SHA256 (runbus token create prints it)");
            }
            String[] parts = line.split(":", -1);
            if (parts.length != 3) {
                throw new IllegalArgumentException(where + "expected NAME:SCOPE[,SCOPE]:SHA256-HEX");
            }
            if (!NAME.matcher(parts[0]).matches()) {
                throw new IllegalArgumentException(where + "a token name is 1 to 64 letters, digits, '_', '.', '@'"
                        + " or '-'");
            }
            Set<Scope> scopes;
            try {
                scopes = Scope.parseList(parts[1]);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + e.getMessage());
            }
            if (!HASH.matcher(parts[2]).matches()) {
                throw new IllegalArgumentException(where + "the hash must be 64 hexadecimal digits (SHA-256)");
            }
            if (!names.add(parts[0])) {
                throw new IllegalArgumentException(where + "a second token named '" + parts[0] + "'");
            }
            if (!hashes.add(parts[2].toLowerCase(java.util.Locale.ROOT))) {
                throw new IllegalArgumentException(where + "the same token as an earlier line");
            }
            out.add(new ApiToken(parts[0], scopes, HexFormat.of().parseHex(parts[2])));
        }
    }

    public boolean isEmpty() {
        return tokens.isEmpty();
    }

    public int size() {
        return tokens.size();
    }

    /**
     * The token whose secret {@code presented} is. Every stored hash is compared, in constant time, whatever
     * matched: how long this takes says nothing about which token, or how much of one, was right.
     */
    public Optional<ApiToken> match(String presented) {
        byte[] hash = sha256(presented);
        ApiToken found = null;
        for (ApiToken t : tokens) {
            if (MessageDigest.isEqual(hash, t.sha256()) & found == null) {
                found = t;
            }
        }
        return Optional.ofNullable(found);
    }

    /** A new token: {@value #PREFIX} and 32 random bytes, base64url. */
    public static String generate(SecureRandom random) {
        byte[] bytes = new byte[32];
        random.nextBytes(bytes);
        return PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    public static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
