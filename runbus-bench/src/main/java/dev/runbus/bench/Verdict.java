package dev.runbus.bench;

/**
 * Whether a target was met, judged on the whole min–max range of its rounds and not on the median alone: a
 * range that lies on both sides of the target says the machine's noise is larger than the distance to it.
 */
enum Verdict {
    MET("met"),
    WITHIN_NOISE("within noise"),
    MISSED("**missed**"),
    NOT_MEASURED("not measured");

    private final String text;

    Verdict(String text) {
        this.text = text;
    }

    /** As the report's targets table writes it (markdown). */
    String text() {
        return text;
    }

    /** A figure that should be at least {@code target}: met when every round is, missed when none is. */
    static Verdict atLeast(Stats.Summary s, double target) {
        if (s.isEmpty()) {
            return NOT_MEASURED;
        }
        return s.min() >= target ? MET : s.max() < target ? MISSED : WITHIN_NOISE;
    }

    /** A figure that should be at most {@code target}: met when every round is, missed when none is. */
    static Verdict atMost(Stats.Summary s, double target) {
        if (s.isEmpty()) {
            return NOT_MEASURED;
        }
        return s.max() <= target ? MET : s.min() > target ? MISSED : WITHIN_NOISE;
    }

    /**
     * A target that asks for every round: met only when each of the {@code rounds} rounds measured and passed;
     * a round that failed or fell short is a miss, not noise.
     */
    static Verdict everyRound(Stats.Summary s, int rounds, boolean atLeast, double target) {
        if (s.isEmpty()) {
            return NOT_MEASURED;
        }
        boolean all = s.n() == rounds && (atLeast ? s.min() >= target : s.max() <= target);
        return all ? MET : MISSED;
    }
}
