package dev.runbus.runs.internal.schedule;

import dev.runbus.runs.MisfirePolicy;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Which of a schedule's due fires make a run, by its misfire policy (docs/schedules.md, "Misfires"): every on-time
 * fire (found at most the grace after its time); of the missed ones, the latest alone when there is no on-time one
 * ({@code RUN_ONCE}), none ({@code SKIP}), or the latest {@code max} within the window ({@code CATCH_UP}). Pure logic.
 *
 * @param onTime   the fires that make a run on time, oldest first
 * @param caughtUp the missed fires that make a run, oldest first
 * @param missed   how many due fires make none
 */
record FirePlan(List<Instant> onTime, List<Instant> caughtUp, long missed) {

    /**
     * @param due            the latest due fires, oldest first, each at or before {@code now}
     * @param olderNotListed due fires before the first of {@code due}, not listed (too many to list): missed
     */
    static FirePlan of(List<Instant> due, long olderNotListed, Instant now, MisfirePolicy policy) {
        List<Instant> onTime = new ArrayList<>();
        List<Instant> late = new ArrayList<>();
        for (Instant f : due) {
            (Duration.between(f, now).compareTo(policy.grace()) <= 0 ? onTime : late).add(f);
        }
        List<Instant> caughtUp = new ArrayList<>();
        switch (policy.kind()) {
            case RUN_ONCE -> {
                if (onTime.isEmpty() && !late.isEmpty()) {
                    caughtUp.add(late.get(late.size() - 1));
                }
            }
            case SKIP -> {
            }
            case CATCH_UP -> {
                for (int i = late.size() - 1; i >= 0 && caughtUp.size() < policy.catchUpMax(); i--) {
                    if (Duration.between(late.get(i), now).compareTo(policy.catchUpWindow()) <= 0) {
                        caughtUp.add(0, late.get(i));
                    }
                }
            }
            default -> throw new IllegalStateException("unknown misfire policy " + policy.kind());
        }
        return new FirePlan(onTime, caughtUp, late.size() - caughtUp.size() + olderNotListed);
    }
}
