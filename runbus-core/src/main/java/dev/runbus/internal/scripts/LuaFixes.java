package dev.runbus.internal.scripts;

import dev.runbus.internal.redis.RedisVersion;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The releases that fix the Lua CVEs of October 2025 (CVE-2025-49844, CVE-2025-46817, CVE-2025-46818,
 * CVE-2025-46819), per release line, and the one warning a bus logs at connect on a server older than its line's.
 * Every caller that may run scripts (EVAL, or FUNCTION LOAD) could exploit those on an unfixed server; runbus's
 * own users cannot once they hold {@code +fcall} only, but another client of the same server may. A line not
 * listed and newer than the listed ones came out after the fixes; an older one (Redis 7.0) gets no fix. A
 * distribution may have backported the fixes into an older version number, which this check cannot see: the
 * warning says so.
 */
public final class LuaFixes {

    private static final Logger log = LoggerFactory.getLogger(LuaFixes.class);

    /** Redis: major.minor -> the fixed release of that line (docs/security.md). */
    static final Map<String, String> REDIS = Map.of("6.2", "6.2.20", "7.2", "7.2.11", "7.4", "7.4.6", "8.0", "8.0.4",
            "8.2", "8.2.2");
    /** Valkey: major.minor -> the fixed release of that line (docs/security.md). */
    static final Map<String, String> VALKEY = Map.of("7.2", "7.2.11", "8.0", "8.0.6", "8.1", "8.1.4");

    private LuaFixes() {
    }

    /** Logs one WARN line when {@code version} is older than the fixed release of its line. */
    public static void warnIfUnpatched(RedisVersion version) {
        warning(version).ifPresent(log::warn);
    }

    /** The warning for {@code version}, if it is older than the fixed release of its line. */
    static Optional<String> warning(RedisVersion version) {
        if (version.version() == null) {
            return Optional.empty();
        }
        Map<String, String> fixed = version.product().equals("Valkey") ? VALKEY : REDIS;
        int[] v = RedisVersion.numbers(version.version());
        String line = v[0] + "." + v[1];
        String fix = fixed.get(line);
        if (fix != null) {
            if (compare(v, RedisVersion.numbers(fix)) >= 0) {
                return Optional.empty();
            }
        } else if (fixed.keySet().stream().anyMatch(l -> compare(v, RedisVersion.numbers(l)) < 0)) {
            List<String> newer = fixed.values().stream().filter(f -> compare(v, RedisVersion.numbers(f)) < 0)
                    .sorted(Comparator.comparing(RedisVersion::numbers, LuaFixes::compare)).toList();
            fix = "a fixed release of a newer line (" + String.join(", ", newer) + "; the " + line
                    + " line gets no fix)";
        } else {
            return Optional.empty(); // a line released after the fixes
        }
        return Optional.of(version + " is older than the release that fixes the Lua CVEs of October 2025 "
                + "(CVE-2025-49844, CVE-2025-46817, CVE-2025-46818, CVE-2025-46819): upgrade to " + fix
                + ", unless your distribution backported the fixes into this version. Until then give scripting "
                + "rights (+eval, +evalsha, +function) to no client you do not trust (docs/security.md)");
    }

    private static int compare(int[] a, int[] b) {
        for (int i = 0; i < 3; i++) {
            if (a[i] != b[i]) {
                return Integer.compare(a[i], b[i]);
            }
        }
        return 0;
    }
}
