package dev.runbus.internal.ordered;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The assignment of partitions to the members of an ordered group: a pure function, tested as one. */
class AssignmentTest {

    /** Every member's partitions, as each computes them from one view. */
    private static Map<String, Set<Integer>> all(List<String> members, Map<Integer, String> owners, int n) {
        Map<String, Set<Integer>> out = new HashMap<>();
        members.forEach(m -> out.put(m, Assignment.of(members, owners, m, n)));
        return out;
    }

    private static Map<Integer, String> owners(Map<String, Set<Integer>> assignment) {
        Map<Integer, String> owners = new HashMap<>();
        assignment.forEach((m, ps) -> ps.forEach(p -> owners.put(p, m)));
        return owners;
    }

    @Test
    void everyPartitionHasOneMember_andEachGetsTheFloorOrTheCeilingOfItsShare() {
        for (int n : new int[] {1, 7, 16, 64}) {
            for (int m = 1; m <= 9; m++) {
                List<String> members = new java.util.ArrayList<>();
                for (int i = 0; i < m; i++) {
                    members.add("c" + i);
                }
                Map<String, Set<Integer>> a = all(members, Map.of(), n);
                Set<Integer> union = new HashSet<>();
                int total = 0;
                for (Set<Integer> ps : a.values()) {
                    assertThat(ps.size()).isBetween(n / m, (n + m - 1) / m);
                    union.addAll(ps);
                    total += ps.size();
                }
                assertThat(total).as("n=%d m=%d", n, m).isEqualTo(n);
                assertThat(union).hasSize(n);
            }
        }
    }

    @Test
    void aMemberLeaving_movesOnlyItsOwnPartitions() {
        Map<String, Set<Integer>> four = all(List.of("a", "b", "c", "d"), Map.of(), 16);
        Map<Integer, String> owners = owners(four);
        owners.values().removeIf("c"::equals); // c died: its leases expired
        Map<String, Set<Integer>> three = all(List.of("a", "b", "d"), owners, 16);
        for (String m : List.of("a", "b", "d")) {
            assertThat(three.get(m)).containsAll(four.get(m));
        }
        assertThat(owners(three)).hasSize(16);
    }

    @Test
    void aMemberJoining_takesOnlyTheSurplusOfTheOthers() {
        Map<String, Set<Integer>> two = all(List.of("a", "b"), Map.of(), 16);
        Map<String, Set<Integer>> three = all(List.of("a", "b", "c"), owners(two), 16);
        assertThat(two.get("a")).containsAll(three.get("a"));
        assertThat(two.get("b")).containsAll(three.get("b"));
        assertThat(three.get("c")).hasSize(5);
    }

    @Test
    void aNonMemberGetsNothing_andOwnersThatAreNotMembersCountAsNone() {
        assertThat(Assignment.of(List.of("a"), Map.of(0, "ghost"), "x", 4)).isEmpty();
        assertThat(Assignment.of(List.of("a"), Map.of(0, "ghost"), "a", 4)).containsExactly(0, 1, 2, 3);
    }

    @Test
    void aStaleMemberKeepsWhatItHolds_butWhatIsFreeGoesToTheMembersThatRenew() {
        // c died (its leases expired) while b is paused: b still owns 4..7 until its leases lapse too.
        Map<Integer, String> owners = new HashMap<>();
        for (int p = 0; p < 4; p++) {
            owners.put(p, "a");
        }
        for (int p = 4; p < 8; p++) {
            owners.put(p, "b");
        }
        List<String> members = List.of("a", "b");
        Set<String> stale = Set.of("b");
        Set<Integer> a = Assignment.of(members, stale, owners, "a", 12);
        Set<Integer> b = Assignment.of(members, stale, owners, "b", 12);
        assertThat(b).containsExactly(4, 5, 6, 7);
        assertThat(a).containsExactlyInAnyOrder(0, 1, 2, 3, 8, 9, 10, 11);

        // Without a renewing member nothing free is given to anyone; what is held stays.
        assertThat(Assignment.of(List.of("b"), Set.of("b"), owners, "b", 12)).containsExactly(4, 5, 6, 7);
        // Once b renews again, the usual fair share holds.
        assertThat(Assignment.of(members, Set.of(), owners, "b", 12)).hasSize(6);
    }
}
