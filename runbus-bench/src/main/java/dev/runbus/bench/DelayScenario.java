package dev.runbus.bench;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.RetryPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * Scenario 9: delayed delivery and retries after a delay, through runbus only.
 * <ul>
 *   <li><b>Lateness</b>: entries scheduled at a steady rate with {@code publishAt}, delays spread uniformly over
 *       0.5–3 s, by a bus that does not subscribe to the topic (a web process scheduling, workers consuming), so
 *       the consumers' movers find the entries by looking at the delay set; two consumer buses, one subscription
 *       each. For each delivered entry: handler start − due, both on the Redis server's clock. The due instant is
 *       computed from the server's TIME, fetched once and advanced by {@link System#nanoTime()} (same host), and
 *       carried in a header. Measured with the default poll interval, with the publisher subscribed as well (its
 *       mover is told of each entry it schedules), and with a 20 ms poll interval; and for lone entries, each
 *       scheduled into an empty delay set with a delay under the poll interval, the case the poll bounds
 *       ({@link DelayLateness}).</li>
 *   <li><b>Moves</b>: N entries scheduled with delay 0 on a topic nobody subscribes to, then one bus subscribes;
 *       the time until the stream holds N entries (XLEN), against appending the same N with {@code publishAll}
 *       ({@link DelayMoves}).</li>
 *   <li><b>Retries</b>: the drain of scenario 5 (C = 4) where every 10th message fails on its first attempt and
 *       succeeds on its second, retried by {@link RetryPolicy#fixed} or by the reclaimer ({@link RetryPolicy#onIdle}
 *       with the shortest sensible minIdle), against the same drain without failures ({@link RetryDrain}).</li>
 * </ul>
 */
final class DelayScenario {

    /**
     * One window of the lateness measurement, in ms: percentiles of handled − due (an entry handled early counts
     * as 0 in them), the earliest handling (negative: before due), entries handled before due by more than the
     * clock's uncertainty, and that uncertainty ({@link ServerClock}).
     */
    record Lateness(double p50, double p99, double max, double earliest, long scheduled, long delivered, long early,
                    double scheduledRate, double clockUncertaintyMillis) implements java.io.Serializable {
        static final Lateness FAILED = new Lateness(Double.NaN, Double.NaN, Double.NaN, Double.NaN, 0, 0, 0,
                Double.NaN, Double.NaN);
    }

    /** One round of the move measurement, per second. */
    record Move(double scheduledRate, double movedRate, double publishRate) implements java.io.Serializable {
        static final Move FAILED = new Move(Double.NaN, Double.NaN, Double.NaN);
    }

    /**
     * One retry drain: messages per second until every message succeeded and nothing is pending; messages per
     * second until every message had its first attempt (the healthy traffic, with the failures' own cost but not
     * their wait); when the last retried message succeeded (seconds from the first publish); a retried message's
     * first failure → its success.
     */
    record Retry(double rate, double firstPassRate, double lastRetrySeconds, double retryP50Millis,
                 double retryMaxMillis) implements java.io.Serializable {
        static final Retry FAILED = new Retry(Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
    }

    record Result(int rate, long scheduleMillis, long minDelayMillis, long maxDelayMillis, int buses, int consumers,
                  long pollMillis, long fastPollMillis, List<Lateness> polled, List<Lateness> hinted,
                  List<Lateness> polledFast, int loneEntries, long loneMinDelayMillis, long loneMaxDelayMillis,
                  List<Lateness> lone, List<Lateness> loneFast, int moveEntries, int publishBatch,
                  int scheduleThreads, List<Move> moves,
                  int retryMessages, int failEvery, long retryDelayMillis, long minIdleMillis, long claimIntervalMillis,
                  List<Retry> clean, List<Retry> fixed, List<Retry> onIdle) implements java.io.Serializable {

        static <T> List<Double> values(List<T> samples, ToDoubleFunction<T> f) {
            List<Double> out = new ArrayList<>();
            samples.forEach(s -> out.add(f.applyAsDouble(s)));
            return out;
        }

        /** Entries delivered before they were due, over every window of every kind. */
        long early() {
            long n = 0;
            for (List<Lateness> kind : List.of(polled, hinted, polledFast, lone, loneFast)) {
                for (Lateness l : kind) {
                    n += l.early();
                }
            }
            return n;
        }
    }

    /** The shorter poll interval measured next to the default. */
    static final long FAST_POLL_MILLIS = 20;

    private DelayScenario() {
    }

    static Result run(Env env) throws Exception {
        BenchOptions.Sizes s = env.sizes;
        List<Lateness> polled = new ArrayList<>();
        List<Lateness> hinted = new ArrayList<>();
        List<Lateness> fast = new ArrayList<>();
        List<Lateness> lone = new ArrayList<>();
        List<Lateness> loneFast = new ArrayList<>();
        List<Move> moves = new ArrayList<>();
        List<Retry> clean = new ArrayList<>();
        List<Retry> fixed = new ArrayList<>();
        List<Retry> onIdle = new ArrayList<>();
        long pollMillis = BusConfig.DEFAULT_DELAY_POLL_INTERVAL.toMillis();
        Jit.settle("delay", 3, () -> {
            DelayLateness.measure(env, pollMillis, false, DelayLateness.steady(s.delayRate(), 1_000));
            RetryDrain.measure(env, RetryDrain.Kind.FIXED, s.warmupMessages());
        });
        int rounds = env.options.repeats();
        for (int round = 0; round < rounds; round++) {
            DelayLateness.Schedule steady = DelayLateness.steady(s.delayRate(), s.delayScheduleMillis());
            DelayLateness.Schedule alone = DelayLateness.lone(s.delayLoneEntries());
            for (int k = 0; k < 5; k++) {
                switch ((k + round) % 5) {
                    case 0 -> polled.add(say(round, "polled, poll " + pollMillis + " ms",
                            DelayLateness.measure(env, pollMillis, false, steady)));
                    case 1 -> hinted.add(say(round, "publisher subscribed too",
                            DelayLateness.measure(env, pollMillis, true, steady)));
                    case 2 -> fast.add(say(round, "polled, poll " + FAST_POLL_MILLIS + " ms",
                            DelayLateness.measure(env, FAST_POLL_MILLIS, false, steady)));
                    case 3 -> lone.add(say(round, "lone, poll " + pollMillis + " ms",
                            DelayLateness.measure(env, pollMillis, false, alone)));
                    default -> loneFast.add(say(round, "lone, poll " + FAST_POLL_MILLIS + " ms",
                            DelayLateness.measure(env, FAST_POLL_MILLIS, false, alone)));
                }
            }
            Move m = DelayMoves.measure(env);
            moves.add(m);
            Progress.say("delay round %d/%d, %,d due entries: scheduled %s/s, moved %s/s, publishAll %s/s (%s)",
                    round + 1, rounds, s.delayMoveEntries(), Fmt.rate(m.scheduledRate()), Fmt.rate(m.movedRate()),
                    Fmt.rate(m.publishRate()), Fmt.ratio(m.movedRate() / m.publishRate()));
            for (int k = 0; k < 3; k++) {
                RetryDrain.Kind kind = RetryDrain.Kind.values()[(k + round) % 3];
                Retry r = RetryDrain.measure(env, kind, s.delayRetryMessages());
                (kind == RetryDrain.Kind.CLEAN ? clean : kind == RetryDrain.Kind.FIXED ? fixed : onIdle).add(r);
                Progress.say("delay round %d/%d, retry drain %-32s %,8.0f msg/s (first attempts %,8.0f msg/s),"
                        + " last retry done %s, retry delay p50 %s ms, max %s ms", round + 1, rounds, kind.label,
                        r.rate(), r.firstPassRate(), Fmt.seconds(r.lastRetrySeconds()), Fmt.ms(r.retryP50Millis()),
                        Fmt.ms(r.retryMaxMillis()));
            }
        }
        return new Result(s.delayRate(), s.delayScheduleMillis(), DelayLateness.MIN_DELAY_MILLIS,
                DelayLateness.MAX_DELAY_MILLIS, DelayLateness.BUSES, DelayLateness.BUSES * DelayLateness.CONCURRENCY,
                pollMillis, FAST_POLL_MILLIS, polled, hinted, fast, s.delayLoneEntries(),
                DelayLateness.LONE_MIN_DELAY_MILLIS, DelayLateness.LONE_MAX_DELAY_MILLIS, lone, loneFast,
                s.delayMoveEntries(), Producer.BATCH, DelayMoves.SCHEDULERS, moves, s.delayRetryMessages(),
                RetryDrain.FAIL_EVERY, RetryDrain.RETRY_DELAY_MILLIS, RetryDrain.ON_IDLE_MIN_IDLE_MILLIS,
                RetryDrain.ON_IDLE_CLAIM_INTERVAL_MILLIS, clean, fixed, onIdle);
    }

    private static Lateness say(int round, String label, Lateness l) {
        Progress.say("delay round %d, lateness %-26s p50 %s ms, p99 %s ms, max %s ms, earliest %+.3f ms; %,d of %,d"
                        + " delivered, %d early (scheduled %s/s, clock uncertainty %s ms)", round + 1, label,
                Fmt.ms(l.p50()), Fmt.ms(l.p99()), Fmt.ms(l.max()), l.earliest(), l.delivered(), l.scheduled(),
                l.early(), Fmt.rate(l.scheduledRate()), Fmt.ms(l.clockUncertaintyMillis()));
        return l;
    }

    /** A bus on the key prefix {@code slug} of this run, with the delay poll interval {@code pollMillis}. */
    static Bus bus(Env env, String slug, long pollMillis) {
        return Bus.connect(BusConfig.builder(env.options.redisUri()).keyPrefix(env.prefix(slug))
                .delayPollInterval(Duration.ofMillis(pollMillis)).build());
    }
}
