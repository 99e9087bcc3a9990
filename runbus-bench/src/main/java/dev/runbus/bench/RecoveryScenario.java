package dev.runbus.bench;

import dev.runbus.SubscribeOptions;
import dev.runbus.Subscription;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Scenario 4: a consumer holding K in-flight entries is killed with SIGKILL (a child JVM); a live consumer of
 * the same group takes them over. The figure is the time from the kill until all K are acknowledged, next to
 * {@code minIdle + claimInterval}, the bound the design promises (an entry waits {@code minIdle} after the
 * dead consumer's last keep-alive, plus up to one claim interval). Where the kill falls in the victim's
 * keep-alive cycle decides how long its entries have already been idle, so each round kills at a random
 * moment within one keep-alive interval (seeded with the run's order seed), and the report gives the range. On
 * Redis 8.2 or later each round also kills and takes over on the path older servers get (victim and survivor with
 * {@code runbus.redis.commandsUpTo=8.0}), at the same phase, the two in a random order.
 */
final class RecoveryScenario {

    /**
     * {@code killPhaseMillis}: per round, the random wait added before the kill, within {@code keepAliveMillis}.
     * {@code olderPathSeconds}: per round, the same on the Redis 8.0 path; empty on a server older than 8.2.
     */
    record Result(int inFlight, long minIdleMillis, long claimIntervalMillis, long keepAliveMillis,
                  List<Double> seconds, List<Double> killPhaseMillis, List<Double> olderPathSeconds)
            implements java.io.Serializable {

        /** Results saved before the kill's phase was drawn, or before the older path was measured, have none. */
        Result {
            killPhaseMillis = killPhaseMillis == null ? List.of() : killPhaseMillis;
            olderPathSeconds = olderPathSeconds == null ? List.of() : olderPathSeconds;
        }
    }

    private RecoveryScenario() {
    }

    static Result run(Env env) throws Exception {
        BenchOptions.Sizes s = env.sizes;
        List<Double> seconds = new ArrayList<>();
        List<Double> phases = new ArrayList<>();
        List<Double> olderSeconds = new ArrayList<>();
        boolean bothPaths = env.admin.hasRedis8Commands();
        // the victim's default keep-alive interval (SubscribeOptions: minIdle / 3)
        long keepAlive = s.recoveryMinIdleMillis() / 3;
        java.util.Random random = new java.util.Random(env.order.seed());
        RunbusContender runbus = new RunbusContender(env.options.redisUri(), env.prefix("recovery"));
        RunbusContender older = bothPaths ? RunbusContender.olderPath(env.options.redisUri(),
                env.prefix("recovery-80")) : null;
        try {
            for (int round = 0; round < env.options.repeats(); round++) {
                long phase = (long) (random.nextDouble() * keepAlive);
                phases.add((double) phase);
                List<RunbusContender> paths = bothPaths ? List.of(runbus, older) : List.of(runbus);
                for (RunbusContender c : env.order.of(paths, "recovery", round, RunbusContender::name)) {
                    double t = once(env, c, phase);
                    (c == runbus ? seconds : olderSeconds).add(t);
                    Progress.say("recovery round %d/%d, %s: %d in-flight entries recovered %.3f s after a kill %d ms"
                            + " into the keep-alive interval (minIdle %d ms, claim interval %d ms)", round + 1,
                            env.options.repeats(), c.name(), s.recoveryInFlight(), t, phase,
                            s.recoveryMinIdleMillis(), s.recoveryClaimIntervalMillis());
                }
            }
        } finally {
            runbus.close();
            if (older != null) {
                older.close();
            }
        }
        return new Result(s.recoveryInFlight(), s.recoveryMinIdleMillis(), s.recoveryClaimIntervalMillis(), keepAlive,
                seconds, phases, olderSeconds);
    }

    private static double once(Env env, RunbusContender runbus, long phaseMillis) throws Exception {
        BenchOptions.Sizes s = env.sizes;
        Target t = env.target(runbus, "recovery");
        env.admin.createGroup(t.streamKey(), t.group());
        env.producer.publish(t.streamKey(), 0, s.recoveryInFlight(), i -> false);
        Path log = Files.createTempFile("runbus-bench-recovery", ".log");
        List<String> command = new ArrayList<>(List.of(javaExecutable(), "-Xmx256m"));
        if (runbus.commandsUpTo() != null) {
            command.add("-Drunbus.redis.commandsUpTo=" + runbus.commandsUpTo());
        }
        command.addAll(List.of("-cp", classPath(), RecoveryChild.class.getName(), env.options.redisUri(), t.prefix(),
                t.topic(), t.group(), Integer.toString(s.recoveryInFlight()), Long.toString(s.recoveryMinIdleMillis()),
                Long.toString(s.recoveryClaimIntervalMillis())));
        Process child = new ProcessBuilder(command).redirectError(log.toFile()).start();
        Subscription survivor = null;
        try {
            awaitHolding(child, log);
            Probe probe = Probe.counting();
            SubscribeOptions options = SubscribeOptions.builder().concurrency(8).blockTime(Duration.ofMillis(100))
                    .minIdle(Duration.ofMillis(s.recoveryMinIdleMillis()))
                    .claimInterval(Duration.ofMillis(s.recoveryClaimIntervalMillis())).build();
            survivor = runbus.subscribe(t, "survivor", d -> probe.handled(), options);
            Env.sleep(200 + phaseMillis);
            long killedAt = System.nanoTime();
            child.destroyForcibly();
            child.waitFor(10, TimeUnit.SECONDS);
            env.awaitAcked(probe, s.recoveryInFlight(), t, 300_000);
            return (System.nanoTime() - killedAt) / 1e9;
        } catch (TimeoutException e) {
            Progress.say("  recovery: %s", e.getMessage());
            return Double.NaN;
        } finally {
            if (child.isAlive()) {
                child.destroyForcibly();
            }
            if (survivor != null) {
                survivor.close();
            }
            env.admin.deleteMatching(t.keyPattern());
            Files.deleteIfExists(log);
        }
    }

    private static void awaitHolding(Process child, Path log) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            if (out.ready()) {
                String line = out.readLine();
                if (line != null && line.startsWith("HOLDING")) {
                    return;
                }
            } else if (!child.isAlive()) {
                throw new IllegalStateException("the consumer to be killed exited early: "
                        + Files.readString(log, StandardCharsets.UTF_8));
            } else {
                Thread.sleep(10);
            }
        }
        throw new IllegalStateException("the consumer to be killed did not take its entries within 60 s");
    }

    private static String javaExecutable() {
        return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }

    /**
     * The class path of this benchmark. Under {@code mvn exec:java} the JVM's own class path is Maven's, and the
     * project's classes sit in the context class loader; otherwise it is {@code java.class.path}.
     */
    static String classPath() throws URISyntaxException {
        List<String> entries = new ArrayList<>();
        for (ClassLoader cl = Thread.currentThread().getContextClassLoader(); cl != null; cl = cl.getParent()) {
            if (cl instanceof URLClassLoader) {
                for (URL u : ((URLClassLoader) cl).getURLs()) {
                    if ("file".equals(u.getProtocol())) {
                        entries.add(Paths.get(u.toURI()).toString());
                    }
                }
            }
            if (!entries.isEmpty() && entries.stream().anyMatch(e -> e.contains("runbus-bench"))) {
                break;
            }
        }
        if (entries.stream().noneMatch(e -> e.contains("runbus-bench"))) {
            return System.getProperty("java.class.path");
        }
        return String.join(File.pathSeparator, entries);
    }
}
