package dev.runbus;

/**
 * How the bus runs its Lua scripts on Redis ({@link BusConfig#scriptMode()}).
 *
 * <p>As a function library (Redis 7 and later, Valkey 7.2 and later), the Redis users of workers and publishers
 * need {@code +fcall} and no {@code +eval}/{@code +evalsha}: such a user can run runbus's functions only, not any
 * script it sends, which closes the door the Lua CVEs of 2025 came through (docs/security.md). The library is
 * loaded by {@code runbus migrate} (or {@link ScriptLibrary#load}) or, when missing, by the first bus whose user
 * may ({@code +function|load}).
 */
public enum ScriptMode {

    /** Functions on Redis 7 and later (and Valkey), EVAL on Redis 6.2, which has no functions. The default. */
    AUTO,

    /** EVALSHA, and EVAL when the server does not know the script yet, on every version. */
    EVAL,

    /** FCALL of runbus's function library; a server older than Redis 7 is refused at connect. */
    FUNCTIONS
}
