package dev.runbus.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which partitions a member of an ordered group should own: members sorted by name, and partition {@code p} to
 * the member at index {@code p mod members}. Every member computes the same answer from the same member list,
 * and each owns ⌈N/M⌉ or ⌊N/M⌋ of N partitions among M members.
 */
final class Assignment {

    private Assignment() {
    }

    /** The partitions {@code me} should own; none when it is not among the members. */
    static Set<Integer> of(List<String> members, String me, int partitions) {
        List<String> sorted = new ArrayList<>(new TreeSet<>(members));
        int index = sorted.indexOf(me);
        Set<Integer> mine = new TreeSet<>();
        if (index < 0) {
            return mine;
        }
        for (int p = index; p < partitions; p += sorted.size()) {
            mine.add(p);
        }
        return mine;
    }
}
