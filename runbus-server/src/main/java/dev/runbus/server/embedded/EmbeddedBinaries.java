package dev.runbus.server.embedded;

/**
 * What the jar holds of the embedded servers' binaries: Redis 6.2 for Linux and macOS on amd64 and arm64, and
 * PostgreSQL for Linux (glibc) and macOS on amd64 (docs/cli.md, "The jar"). A jar built with
 * {@code -Pwithout-embedded-binaries} holds none, for servers that are always given by URL.
 */
final class EmbeddedBinaries {

    private EmbeddedBinaries() {
    }

    /** The error when the embedded {@code server} has no binary for {@code platform} in this jar. */
    static String missing(String server, String platform) {
        return "this runbus jar holds no embedded " + server + " for " + platform + " (it carries Redis for Linux"
                + " and macOS on amd64 and arm64 and PostgreSQL for Linux and macOS on amd64, or none when built with"
                + " -Pwithout-embedded-binaries): give --redis-url and --database-url";
    }
}
