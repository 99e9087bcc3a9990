package dev.runbus;

import static dev.runbus.testing.FlowJobs.job;
import static dev.runbus.testkit.Deployment.CLUSTER;
import static dev.runbus.testkit.Deployment.LOCAL;
import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testing.FlowWorker;
import dev.runbus.testkit.ChildJvm;
import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.OnDeployments;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.Parameter;

/**
 * A cap is never exceeded while workers die (docs/flow-control.md, guarantee 1): three worker JVMs ({@link FlowWorker})
 * with 8 handlers each, a per-key cap of 2 and a topic cap of 8 run 6 keys' messages (so the topic is at its cap
 * throughout, with keys waiting for their turn: 8 slots of 12 the keys' caps allow, 24 handlers) while the test
 * SIGKILLs a random worker every 2 s and SIGTERMs another every 3 s, starting a new one in its place each time. Every
 * handler's start and end are on the machine's clock in µs; a handler whose worker died before its end ran until the
 * death. At every instant of the merged log at most 2 handlers of a key and 8 in all ran, and every message's handler
 * ended once at least; nothing was dead-lettered. The kills go on while there is work: about 20 s on an idle
 * machine, 6 or 7 deaths (longer beside other work).
 */
@OnDeployments({LOCAL, CLUSTER})
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class FlowCapUnderKillsTest {

    private static final String TOPIC = "jobs";
    private static final int CAP = 2;
    private static final int TOPIC_CAP = 8;
    private static final int KEYS = 6;
    /** About 8 s of work on an idle machine: 8 slots of the topic, 100 ms per handler, 80 messages a second. */
    private static final int PER_KEY = 110;
    /**
     * The slots' lease. A worker that gets no CPU for longer than its lease less a keep-alive interval loses its slots
     * while its handlers still run (the lease's limit, docs/flow-control.md), which a loaded two-core machine did to a
     * lease of 1 s (loaded run 63): 3 s leaves such a worker 2 s.
     */
    private static final long MIN_IDLE_MILLIS = 3_000;

    private final String prefix = "test-flow-kills-" + UUID.randomUUID();
    private final List<Worker> workers = new ArrayList<>();
    private final List<Worker> ended = new ArrayList<>();

    @Parameter
    Deployment deployment;

    RedisTarget target() {
        return deployment.target();
    }

    /** A worker JVM and, once it is dead, when it died (µs on the machine's clock, taken after its death). */
    private static final class Worker {
        final ChildJvm jvm;
        long diedAtMicros = Long.MAX_VALUE;

        Worker(ChildJvm jvm) {
            this.jvm = jvm;
        }
    }

    @AfterEach
    void cleanUp() throws Exception {
        for (Worker w : workers) {
            w.jvm.kill();
        }
        target().deleteKeys(prefix);
    }

    private int started;

    private Worker startWorker() throws Exception {
        ChildJvm jvm = ChildJvm.start(FlowWorker.class, target().uri(), prefix, TOPIC, "g", "w" + started++,
                Long.toString(MIN_IDLE_MILLIS), Integer.toString(CAP), "8", "-", Integer.toString(TOPIC_CAP));
        Worker w = new Worker(jvm);
        workers.add(w);
        jvm.awaitLine("READY", Duration.ofSeconds(60));
        return w;
    }

    @Test
    void atNoInstantDoMoreThanTheCapOfAKeyRun_whileWorkersAreKilled_andEveryMessageRuns() throws Exception {
        for (int i = 0; i < 3; i++) {
            startWorker();
        }
        try (Bus bus = Bus.connect(BusConfig.builder(target().uri()).keyPrefix(prefix).build())) {
            List<Message> all = new ArrayList<>();
            for (int n = 0; n < PER_KEY; n++) {
                for (int k = 0; k < KEYS; k++) {
                    all.add(job("key" + k, n));
                }
            }
            Set<String> ids = new HashSet<>();
            all.forEach(m -> ids.add(m.id()));
            bus.publisher().publishAll(TOPIC, all);

            // Kills while there is work, until every message's handler ended once.
            Random random = new Random(7);
            long deadline = System.nanoTime() + Wait.scaled(Duration.ofSeconds(120)).toNanos();
            for (int second = 1; !ended(ids).containsAll(ids); second++) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("not every message's handler ended within the deadline: " + state(ids));
                }
                Thread.sleep(1_000); // the kill schedule's pace, not a wait for anything: the faults come on the clock
                if (second % 2 == 0) {
                    end(random, true);
                } else if (second % 3 == 0) {
                    end(random, false);
                }
            }
            assertThat(bus.deadLetters().list(TOPIC, null, 10)).as("nothing dead-lettered").isEmpty();
        }
        for (Worker w : workers) {
            w.jvm.kill();
            w.diedAtMicros = Math.min(w.diedAtMicros, w.jvm.exitedAtMicros());
        }
        ended.addAll(workers);
        workers.clear();

        Most most = mostAtOnce();
        System.out.printf("FLOW-KILLS[%s] %d workers started, the most handlers of one key at once: %d (cap %d), "
                + "in all: %d (topic cap %d)%n", target().name(), started, most.ofOneKey(), CAP, most.inAll(),
                TOPIC_CAP);
        assertThat(most.ofOneKey()).as("handlers of one key at once, at any instant; slots lost by a paused worker: %s",
                lostSlots()).isLessThanOrEqualTo(CAP);
        assertThat(most.inAll()).as("handlers at once in all, at any instant; slots lost by a paused worker: %s",
                lostSlots()).isLessThanOrEqualTo(TOPIC_CAP);
    }

    /** SIGKILLs ({@code kill}) or SIGTERMs a random worker and starts another in its place. */
    private void end(Random random, boolean kill) throws Exception {
        Worker w = workers.remove(random.nextInt(workers.size()));
        if (kill) {
            w.jvm.kill();
        } else {
            w.jvm.terminate(Duration.ofSeconds(10));
            w.jvm.kill(); // already ended: reads the rest of its output
        }
        // When the JDK saw it end, not when kill returned: that also starts a process to signal and reads the last
        // output, and a loaded machine made it late enough to count a start elsewhere as beside the dead handler.
        w.diedAtMicros = w.jvm.exitedAtMicros();
        ended.add(w);
        startWorker();
    }

    /** The warnings of workers that found a running entry's slot reaped (paused past the lease), for a failure. */
    private List<String> lostSlots() {
        List<String> lost = new ArrayList<>();
        for (Worker w : ended) {
            w.jvm.lines().stream().filter(l -> l.contains("lost their flow slot")).forEach(lost::add);
        }
        return lost;
    }

    /** What the workers did and what Redis holds, for a failure's message. */
    private String state(Set<String> ids) {
        String base = prefix + ":{" + TOPIC + "}:";
        StringBuilder b = new StringBuilder();
        b.append(ended(ids).size()).append(" of ").append(ids.size()).append(" ended; ");
        b.append(started).append(" workers started, ").append(workers.size()).append(" alive; holds ")
                .append(target().redis().zcard(base + "flow:holds")).append(", queued ")
                .append(target().redis().zcard(base + "flow:queue")).append(", parked ")
                .append(target().redis().xlen(base + "flow:parked")).append(", stream ")
                .append(target().redis().xlen(base + "stream")).append(", pending ")
                .append(target().redis().xpending(base + "stream", "g").getCount()).append("; per worker (starts, ends):");
        List<Worker> all = new ArrayList<>(ended);
        all.addAll(workers);
        for (Worker w : all) {
            List<String> lines = w.jvm.lines();
            b.append(" (").append(lines.stream().filter(l -> l.startsWith("START ")).count()).append(", ")
                    .append(lines.stream().filter(l -> l.startsWith("END ")).count()).append(')');
        }
        Set<String> missing = new HashSet<>(ids);
        missing.removeAll(ended(ids));
        b.append("; not ended: ").append(missing).append("; dead letters: ")
                .append(target().redis().xlen(base + "dead")).append("; their lines:");
        for (Worker w : all) {
            for (String line : w.jvm.lines()) {
                if (missing.stream().anyMatch(line::contains)) {
                    b.append("\n  ").append(line);
                }
            }
        }
        return b.toString();
    }

    /** The message ids whose handler printed its end, in any worker so far. */
    private Set<String> ended(Set<String> ids) {
        Set<String> done = new HashSet<>();
        List<Worker> all = new ArrayList<>(ended);
        all.addAll(workers);
        for (Worker w : all) {
            for (String line : w.jvm.lines()) {
                if (line.startsWith("END ")) {
                    done.add(line.split(" ")[2]);
                }
            }
        }
        return done;
    }

    /** The most handlers running at one instant: of one key, and of all keys together. */
    private record Most(int ofOneKey, int inAll) {
    }

    /**
     * The most handlers running at one instant, over every worker's log: each start opens an interval
     * closed by its end in the same worker, or by the worker's death. At equal times an end counts before a start (a
     * slot freed by an end reaches another start through an ack, Redis and a read: never within the same µs).
     */
    private Most mostAtOnce() {
        record Event(long at, String key, int change) {
        }
        List<Event> events = new ArrayList<>();
        for (Worker w : ended) {
            Map<String, String> open = new HashMap<>(); // message id -> key
            for (String line : w.jvm.lines()) {
                String[] f = line.split(" ");
                if (f.length == 4 && f[0].equals("START")) {
                    open.put(f[2], f[1]);
                    events.add(new Event(Long.parseLong(f[3]), f[1], +1));
                } else if (f.length == 4 && f[0].equals("END") && open.remove(f[2]) != null) {
                    events.add(new Event(Long.parseLong(f[3]), f[1], -1));
                }
            }
            open.values().forEach(key -> events.add(new Event(w.diedAtMicros, key, -1)));
        }
        events.sort((a, b) -> a.at() != b.at() ? Long.compare(a.at(), b.at()) : Integer.compare(a.change(), b.change()));
        Map<String, Integer> running = new HashMap<>();
        int most = 0;
        int inAll = 0;
        int mostInAll = 0;
        for (Event e : events) {
            int now = running.merge(e.key(), e.change(), Integer::sum);
            most = Math.max(most, now);
            inAll += e.change();
            mostInAll = Math.max(mostInAll, inAll);
        }
        return new Most(most, mostInAll);
    }
}
