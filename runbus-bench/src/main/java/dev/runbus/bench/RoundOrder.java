package dev.runbus.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * The order in which the contenders of a scenario are measured in each round: a random permutation per round,
 * drawn from one seed that the report prints. A fixed rotation keeps each contender behind the same neighbour
 * in every round, so a neighbour that leaves the machine busy (a JIT, a GC, PostgreSQL's checkpoint) would
 * always weigh on the same one; with the seed, a run can still be repeated in the same order.
 */
final class RoundOrder {

    private final long seed;

    RoundOrder(long seed) {
        this.seed = seed;
    }

    long seed() {
        return seed;
    }

    /** {@code items} in the order of round {@code round} of {@code scenario}, said on the progress output. */
    <T> List<T> of(List<T> items, String scenario, int round, java.util.function.Function<T, String> name) {
        List<T> out = new ArrayList<>(items);
        Collections.shuffle(out, new Random(seed * 31 + scenario.hashCode() * 17L + round));
        List<String> names = new ArrayList<>();
        out.forEach(t -> names.add(name.apply(t)));
        Progress.say("%s round %d: order %s", scenario, round + 1, String.join(", ", names));
        return out;
    }
}
