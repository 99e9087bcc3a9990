package dev.runbus.internal.ordered;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Which partitions each member of an ordered group should own: fair (every member ⌈N/M⌉ or ⌊N/M⌋ of N
 * partitions among M members; the first N mod M members by name get one more) and sticky (a member keeps what
 * it owns, up to its share), so that a member leaving or dying moves only its own partitions and a member
 * joining takes only the surplus of the others. A member that stopped renewing its membership (paused, cut off,
 * dying) keeps what it still holds but is given nothing free: its share of what is free goes to the members that
 * renew, so that a partition whose owner died is not assigned to a member that cannot take it (which held it
 * unowned until that member's membership lapsed too). Every member computes the same answer from the same members
 * and owners; while their views differ for a moment, the exclusive leases keep ownership single and the next
 * tick converges.
 */
final class Assignment {

    private Assignment() {
    }

    /**
     * The partitions {@code me} should own, none when it is not among the members.
     *
     * @param owners current owner of each partition by number (absent or null: none); owners that are not
     *               members count as none
     */
    static Set<Integer> of(List<String> members, Map<Integer, String> owners, String me, int partitions) {
        return of(members, Set.of(), owners, me, partitions);
    }

    /**
     * The partitions {@code me} should own, none when it is not among the members.
     *
     * @param stale  members that stopped renewing: they keep what they own, and get nothing free
     * @param owners current owner of each partition by number (absent or null: none); owners that are not
     *               members count as none
     */
    static Set<Integer> of(List<String> members, Set<String> stale, Map<Integer, String> owners, String me,
                           int partitions) {
        List<String> sorted = new ArrayList<>(new TreeSet<>(members));
        Set<Integer> mine = new TreeSet<>();
        if (!sorted.contains(me)) {
            return mine;
        }
        Map<String, Integer> share = new TreeMap<>();
        for (int i = 0; i < sorted.size(); i++) {
            share.put(sorted.get(i), partitions / sorted.size() + (i < partitions % sorted.size() ? 1 : 0));
        }
        Map<String, Set<Integer>> assigned = new TreeMap<>();
        sorted.forEach(m -> assigned.put(m, new TreeSet<>()));
        List<Integer> free = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            String owner = owners.get(p);
            Set<Integer> kept = owner == null ? null : assigned.get(owner);
            if (kept != null && kept.size() < share.get(owner)) {
                kept.add(p);
            } else {
                free.add(p);
            }
        }
        List<String> renewing = sorted.stream().filter(m -> !stale.contains(m)).toList();
        int next = 0;
        for (String m : renewing) {
            Set<Integer> set = assigned.get(m);
            while (set.size() < share.get(m) && next < free.size()) {
                set.add(free.get(next++));
            }
        }
        // What the stale members' shares leave free goes round the renewing members, in name order.
        for (int i = 0; next < free.size() && !renewing.isEmpty(); i++) {
            assigned.get(renewing.get(i % renewing.size())).add(free.get(next++));
        }
        return assigned.get(me);
    }
}
