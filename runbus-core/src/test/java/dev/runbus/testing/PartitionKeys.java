package dev.runbus.testing;

import dev.runbus.Partitioner;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Message keys that fall into each partition of a topic: for tests that publish to chosen partitions. */
public final class PartitionKeys {

    private PartitionKeys() {
    }

    /** {@code each} keys ({@code key-<n>}) for every one of {@code partitions} partitions, by partition. */
    public static Map<Integer, List<String>> of(int partitions, int each) {
        Map<Integer, List<String>> keys = new HashMap<>();
        for (int i = 0; keys.size() < partitions || keys.values().stream().anyMatch(k -> k.size() < each); i++) {
            String key = "key-" + i;
            List<String> of = keys.computeIfAbsent(Partitioner.partitionOf(key, partitions), p -> new ArrayList<>());
            if (of.size() < each) {
                of.add(key);
            }
        }
        return keys;
    }
}
