package dev.runbus.testing;

import dev.runbus.Partitioner;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Message keys that land on given partitions, for tests that publish to one partition on purpose. */
public final class PartitionKeys {

    private PartitionKeys() {
    }

    /** {@code each} keys ("key-0", "key-1", ...) for every partition of a topic of {@code partitions}. */
    public static Map<Integer, List<String>> byPartition(int partitions, int each) {
        Map<Integer, List<String>> keys = new HashMap<>();
        for (int i = 0; keys.size() < partitions || keys.values().stream().anyMatch(k -> k.size() < each); i++) {
            String key = "key-" + i;
            List<String> own = keys.computeIfAbsent(Partitioner.partitionOf(key, partitions), p -> new ArrayList<>());
            if (own.size() < each) {
                own.add(key);
            }
        }
        return keys;
    }
}
