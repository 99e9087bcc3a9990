package dev.runbus;

import dev.runbus.internal.scripts.RedisFunctionLibrary;
import java.util.List;

/**
 * runbus's Lua scripts as a Redis function library, for the deployments whose workers and publishers may call its
 * functions ({@code +fcall}) but not load them: {@code runbus migrate} loads it with {@link #load} as a user allowed
 * {@code +function|load}, once per runbus version (each version's library has a name of its own, so processes of
 * two versions can run side by side during an upgrade). See {@link ScriptMode} and docs/security.md.
 */
public final class ScriptLibrary {

    private ScriptLibrary() {
    }

    /**
     * What {@link #load} did.
     *
     * @param library   the library's name, {@code runbus_} and a hash of its code
     * @param functions whether the server has functions; false on Redis 6.2, where nothing is loaded and the bus
     *                  sends its scripts with EVAL
     * @param loadedOn  the masters it was loaded on now (address {@code host:port})
     * @param presentOn the masters that had it already
     */
    public record Loaded(String library, boolean functions, List<String> loadedOn, List<String> presentOn) {
        public Loaded {
            loadedOn = List.copyOf(loadedOn);
            presentOn = List.copyOf(presentOn);
        }
    }

    /** The name of this runbus version's library, as FUNCTION LIST shows it. */
    public static String name() {
        return RedisFunctionLibrary.name();
    }

    /**
     * Loads this version's library on every master of the deployment {@code config} names (one server, the master
     * found through Sentinel, or each master of a cluster) that lacks it, with {@code config}'s credentials; a
     * master that has it is left alone. Safe to repeat.
     *
     * @throws RunbusException if Redis cannot be reached, or refuses the load (the message says why: a user
     *                         without {@code +function|load}, say)
     */
    public static Loaded load(BusConfig config) {
        RedisFunctionLibrary.LoadResult done = RedisFunctionLibrary.load(config);
        return new Loaded(done.library(), done.functions(), done.loadedOn(), done.presentOn());
    }
}
