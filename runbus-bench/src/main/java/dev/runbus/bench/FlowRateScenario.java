package dev.runbus.bench;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.FlowRate;
import dev.runbus.Message;
import dev.runbus.SubscribeOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * Scenario 14, opt-in (ten minutes): a flow key's rate at full length (docs/flow-control.md, guarantee 6). One key
 * with a backlog larger than the run can drain, a rate of {@link #PERMITS} a second with a burst of {@link #BURST},
 * {@link #CONSUMERS} consumers of one group; every handler start is timed on the machine's clock and every entry's
 * admission read from its stream id (the Redis clock). The most starts, and the most admissions, in any window of one
 * second, and the long-run rate over the run, against the rate asked.
 */
final class FlowRateScenario {

    static final int PERMITS = 100;
    static final int BURST = 10;
    static final int CONSUMERS = 16;
    private static final String TOPIC = "flow-rate";

    record Result(int permits, int burst, int consumers, long seconds, int starts, int mostStartsInASecond,
                  int mostAdmissionsInASecond, double longRunRate) implements java.io.Serializable {
    }

    private FlowRateScenario() {
    }

    static Result run(Env env) throws Exception {
        long seconds = env.options.quick() ? 60 : 600;
        String prefix = env.prefix("flow-rate");
        // More than the run can let in: the key stays backlogged to the end.
        int backlog = (int) (PERMITS * seconds * 1.05) + 1_000;
        ConcurrentLinkedQueue<long[]> starts = new ConcurrentLinkedQueue<>(); // {start nanos, admitted ms}
        List<Bus> buses = new ArrayList<>();
        try {
            Bus publisher = Bus.connect(BusConfig.builder(env.options.redisUri()).keyPrefix(prefix).build());
            buses.add(publisher);
            List<Message> batch = new ArrayList<>();
            for (int n = 0; n < backlog; n++) {
                batch.add(Message.builder("job", new byte[0]).flowKey("busy").build());
                if (batch.size() == 1_000) {
                    publisher.publisher().publishAll(TOPIC, batch);
                    batch.clear();
                }
            }
            publisher.publisher().publishAll(TOPIC, batch);
            Progress.say("flow-rate: %,d messages of one key waiting; %d consumers subscribe at %d/s, burst %d",
                    backlog, CONSUMERS, PERMITS, BURST);
            long begin = System.nanoTime();
            SubscribeOptions options = SubscribeOptions.builder().flowRate(FlowRate.perSecond(PERMITS)
                    .withBurst(BURST)).concurrency(4).blockTime(Duration.ofMillis(200)).build();
            Bus consumers = Bus.connect(BusConfig.builder(env.options.redisUri()).keyPrefix(prefix).build());
            buses.add(consumers);
            for (int c = 0; c < CONSUMERS; c++) {
                consumers.subscribe(TOPIC, "workers", "c" + c, d -> {
                    String id = d.streamId();
                    starts.add(new long[] {System.nanoTime(), Long.parseLong(id.substring(0, id.indexOf('-')))});
                }, options);
            }
            long end = begin + TimeUnit.SECONDS.toNanos(seconds);
            long lastSaid = begin;
            while (System.nanoTime() < end) {
                Env.sleep(200);
                if (System.nanoTime() - lastSaid > TimeUnit.SECONDS.toNanos(60)) {
                    lastSaid = System.nanoTime();
                    Progress.say("flow-rate: %d s of %d, %,d started", TimeUnit.NANOSECONDS.toSeconds(lastSaid
                            - begin), seconds, starts.size());
                }
            }
            consumers.close();
            buses.remove(consumers);
            List<long[]> all = new ArrayList<>(starts);
            long[] startNanos = all.stream().mapToLong(s -> s[0]).filter(t -> t <= end).sorted().toArray();
            long[] admittedMillis = all.stream().filter(s -> s[0] <= end).mapToLong(s -> s[1]).sorted().toArray();
            int mostStarts = mostWithin(startNanos, TimeUnit.SECONDS.toNanos(1));
            int mostAdmissions = mostWithin(admittedMillis, 1_000);
            double span = (admittedMillis[admittedMillis.length - 1] - admittedMillis[0]) / 1e3;
            double longRun = (admittedMillis.length - BURST) / span;
            Result r = new Result(PERMITS, BURST, CONSUMERS, seconds, startNanos.length, mostStarts, mostAdmissions,
                    longRun);
            Progress.say("flow-rate: %,d started in %d s; most in any second: %d started, %d let in (at most %d);"
                    + " long-run rate %.2f/s (%d/s asked)", r.starts(), seconds, mostStarts, mostAdmissions,
                    PERMITS + BURST, longRun, PERMITS);
            return r;
        } finally {
            buses.forEach(Bus::close);
            env.admin.deleteMatching(prefix + ":*");
        }
    }

    /** The most of the sorted times within any window of {@code width} (a window closed at its start, open at its end). */
    static int mostWithin(long[] sorted, long width) {
        int most = 0;
        int from = 0;
        for (int to = 0; to < sorted.length; to++) {
            while (sorted[to] - sorted[from] >= width) {
                from++;
            }
            most = Math.max(most, to - from + 1);
        }
        return most;
    }
}
