package dev.runbus.internal.scripts;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * runbus's Lua scripts as one Redis function library (Redis 7 and later, Valkey), generated from the script files
 * themselves: each file's body becomes the callback {@code function(KEYS, ARGV) … end} of one function, so a
 * script reads its keys and arguments exactly as under EVAL, and the files stay the one copy of each script.
 *
 * <p>Function names are global on a server, and during a rolling upgrade processes of two runbus versions share
 * it. So the library's name and each function's name carry a short hash of the generated code: each version
 * calls its own functions, and both libraries can be loaded side by side. (An older version's library stays
 * loaded until an operator deletes it: {@code FUNCTION DELETE runbus_<hash>}.)
 */
final class FunctionLibrary {

    /** Every script under {@code resources/dev/runbus/lua}; a test checks that the list matches the folder. */
    static final List<String> SCRIPTS = List.of("ack", "dead_letter", "delete_consumer", "delete_group", "flow",
            "forget_consumer", "group_members", "heartbeat", "keep_alive", "lease_acquire", "lease_renew", "move_due",
            "ordered_ack", "ordered_claim", "ordered_read", "ordered_retry_at", "ordered_start", "partition_count",
            "read_own_pending", "reclaim", "record_starts", "replay", "retention", "retry_later", "schedule",
            "scheduled_cancel", "scheduled_list", "sweep_starts", "trim_by_age");

    /**
     * Flags of the functions that need them, so that they run under {@code maxmemory} as their scripts did under
     * EVAL. A function without flags counts as a write and is refused whole once Redis is over {@code maxmemory};
     * EVAL refused a script there only at a first write that may grow memory. So the scripts whose writes only
     * acknowledge, claim, remove, trim or expire are {@code allow-oom} (acks, takeovers and retention, which frees
     * memory, go on under a full Redis, as before), and the one that only reads is {@code no-writes}. The others
     * (those that append, schedule or set) stay refused under {@code maxmemory}, as their first write was.
     */
    static final Map<String, String> FLAGS = Map.ofEntries(Map.entry("ack", "allow-oom"),
            Map.entry("delete_consumer", "allow-oom"), Map.entry("delete_group", "allow-oom"),
            Map.entry("forget_consumer", "allow-oom"),
            Map.entry("keep_alive", "allow-oom"), Map.entry("lease_renew", "allow-oom"),
            Map.entry("ordered_ack", "allow-oom"), Map.entry("ordered_claim", "allow-oom"),
            Map.entry("ordered_read", "allow-oom"), Map.entry("read_own_pending", "allow-oom"),
            Map.entry("reclaim", "allow-oom"), Map.entry("retention", "allow-oom"),
            Map.entry("scheduled_cancel", "allow-oom"), Map.entry("sweep_starts", "allow-oom"),
            Map.entry("trim_by_age", "allow-oom"),
            Map.entry("scheduled_list", "no-writes"));

    /**
     * A function of no keys that only answers the library's name: what a bus calls at connect to learn whether
     * a master has the library, with the rights it calls every function with ({@code +fcall}).
     */
    static final String PROBE = "loaded";

    private static final FunctionLibrary RUNBUS = of(SCRIPTS.stream().map(LuaScript::load).toList());

    private final String name;
    private final String code;

    private FunctionLibrary(String name, String code) {
        this.name = name;
        this.code = code;
    }

    /** The library of this runbus version's scripts. */
    static FunctionLibrary runbus() {
        return RUNBUS;
    }

    /** The library of {@code scripts}, named after a hash of the code generated from them. */
    static FunctionLibrary of(List<LuaScript> scripts) {
        String body = body(scripts, "%s");
        String name = "runbus_" + hash(body);
        return new FunctionLibrary(name, "#!lua name=" + name + "\n" + body(scripts, name));
    }

    /** The functions' definitions, each function name made of {@code library} and the script's name. */
    private static String body(List<LuaScript> scripts, String library) {
        StringBuilder out = new StringBuilder();
        for (LuaScript s : scripts) {
            // The body's own lines between the two of the wrapper: a body ending in a comment cannot swallow "end".
            out.append("redis.register_function{function_name='").append(library).append('_').append(s.name())
                    .append("', ");
            String flags = FLAGS.get(s.name());
            if (flags != null) {
                out.append("flags={'").append(flags).append("'}, ");
            }
            out.append("callback=function(KEYS, ARGV)\n").append(s.source()).append("\nend}\n");
        }
        out.append("redis.register_function{function_name='").append(library).append('_').append(PROBE)
                .append("', flags={'no-writes'}, callback=function() return '").append(library).append("' end}\n");
        return out.toString();
    }

    /** The library's name, {@code runbus_} and the hash: what FUNCTION LIST and FUNCTION DELETE name. */
    String name() {
        return name;
    }

    /** The code FUNCTION LOAD is given. */
    String code() {
        return code;
    }

    /** The name FCALL calls {@code script} by. */
    String function(LuaScript script) {
        return function(script.name());
    }

    String function(String script) {
        return name + "_" + script;
    }

    /** The first 12 hex digits of the code's SHA-256: short enough to read, long enough never to collide here. */
    private static String hash(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest).substring(0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JVM", e);
        }
    }
}
