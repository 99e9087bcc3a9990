package dev.runbus.internal.scripts;

import dev.runbus.BusConfig;
import dev.runbus.internal.redis.RedisLink;
import java.util.ArrayList;
import java.util.List;

/** What {@link dev.runbus.ScriptLibrary} does, behind the public API: loads the library on every master that lacks it. */
public final class RedisFunctionLibrary {

    private RedisFunctionLibrary() {
    }

    public static String name() {
        return FunctionLibrary.runbus().name();
    }

    /** What a load did: the library's name, whether the server has functions, where it was loaded and found. */
    public record LoadResult(String library, boolean functions, List<String> loadedOn, List<String> presentOn) {
    }

    public static LoadResult load(BusConfig config) {
        FunctionLibrary library = FunctionLibrary.runbus();
        try (RedisLink link = RedisLink.open(config)) {
            if (!link.version().hasFunctions()) {
                return new LoadResult(library.name(), false, List.of(), List.of());
            }
            List<String> loaded = new ArrayList<>();
            List<String> present = new ArrayList<>();
            for (RedisLink.Master m : link.masters()) {
                // FUNCTION LOAD alone, answered "already exists" where it is: the user needs +function|load only.
                (LibraryLoads.load(library, m.redis(), m.address()) ? loaded : present).add(m.address());
            }
            return new LoadResult(library.name(), true, loaded, present);
        }
    }
}
