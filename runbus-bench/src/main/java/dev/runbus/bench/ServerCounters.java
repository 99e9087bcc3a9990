package dev.runbus.bench;

import java.util.Map;
import java.util.TreeMap;

/**
 * What Redis servers say about their own work, summed over the nodes of a deployment: calls and microseconds
 * per command ({@code INFO commandstats}; commands that scripts call count as commands of their own) and CPU
 * seconds of the server processes ({@code used_cpu_user + used_cpu_sys}). The difference of two readings is
 * what happened in between.
 *
 * @param calls      command (as Redis names it: {@code xreadgroup}, {@code cluster|nodes}) → calls
 * @param micros     command → microseconds spent executing it
 * @param cpuSeconds user + system CPU time of the servers
 */
record ServerCounters(Map<String, Long> calls, Map<String, Long> micros, double cpuSeconds) {

    static final ServerCounters ZERO = new ServerCounters(Map.of(), Map.of(), 0);

    /** Reads every node of {@code redis} once ({@code INFO everything}: one INFO call per node). */
    static ServerCounters read(LocalRedis redis) {
        ServerCounters sum = ZERO;
        for (LocalRedis.Node node : redis.nodes()) {
            sum = sum.plus(parse(node.call(r -> r.info("everything"))));
        }
        return sum;
    }

    /** Reads the commandstats and cpu sections out of an INFO reply. */
    static ServerCounters parse(String info) {
        Map<String, Long> calls = new TreeMap<>();
        Map<String, Long> micros = new TreeMap<>();
        double cpu = 0;
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("cmdstat_")) {
                int colon = line.indexOf(':');
                String command = line.substring("cmdstat_".length(), colon);
                for (String field : line.substring(colon + 1).split(",")) {
                    int eq = field.indexOf('=');
                    String name = field.substring(0, eq);
                    if (name.equals("calls")) {
                        calls.put(command, Long.parseLong(field.substring(eq + 1)));
                    } else if (name.equals("usec")) {
                        micros.put(command, Long.parseLong(field.substring(eq + 1)));
                    }
                }
            } else if (line.startsWith("used_cpu_user:") || line.startsWith("used_cpu_sys:")) {
                cpu += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return new ServerCounters(calls, micros, cpu);
    }

    ServerCounters plus(ServerCounters other) {
        return new ServerCounters(merge(calls, other.calls, 1), merge(micros, other.micros, 1),
                cpuSeconds + other.cpuSeconds);
    }

    /** What was counted after {@code earlier}. */
    ServerCounters minus(ServerCounters earlier) {
        return new ServerCounters(merge(calls, earlier.calls, -1), merge(micros, earlier.micros, -1),
                cpuSeconds - earlier.cpuSeconds);
    }

    /** Leaves out {@code n} calls of {@code command} that the benchmark itself made (its INFO, its XPENDING). */
    ServerCounters without(String command, long n) {
        Map<String, Long> c = new TreeMap<>(calls);
        c.computeIfPresent(command, (k, v) -> v - n > 0 ? v - n : null);
        return new ServerCounters(c, micros, cpuSeconds);
    }

    long totalCalls() {
        return calls.values().stream().mapToLong(Long::longValue).sum();
    }

    long totalMicros() {
        return micros.values().stream().mapToLong(Long::longValue).sum();
    }

    private static Map<String, Long> merge(Map<String, Long> a, Map<String, Long> b, int sign) {
        Map<String, Long> out = new TreeMap<>(a);
        b.forEach((k, v) -> out.merge(k, sign * v, Long::sum));
        out.values().removeIf(v -> v == 0);
        return out;
    }
}
