package dev.runbus.bench;

/** How the benchmark measures: the contenders, the producer, how acks and runs are timed, the flags. */
final class MethodSection {

    private final Markdown md;

    MethodSection(Markdown md) {
        this.md = md;
    }

    void write(Results r) {
        md.line("## Method");
        md.line();
        md.line("- Contenders, each on a stream and key prefix of its own, deleted afterwards:");
        if (r.drain != null) {
            r.drain.contenders().forEach((name, how) -> md.line("  - **" + name + "**: " + how + "."));
        } else {
            md.line("  - **runbus**, **Lettuce loop**, **Redisson**, **Spring container**, **naive Jedis** (see"
                    + " `runbus-bench/src/main/java/dev/runbus/bench/*Contender.java`).");
        }
        md.line("- Every entry is written by the same producer in runbus's wire format (`id`, `type`, `payload`,"
                + " `published_at`); the payload is " + Payloads.SIZE + " ASCII bytes starting with the enqueue time.");
        md.line("- Every contender's ack is stamped the same way: when the client has Redis's reply to the XACK in"
                + " hand, on the thread that read it from the socket. runbus acknowledges in batches through its acker,"
                + " from the thread that finished a handler or from Lettuce's I/O thread (there is no acker thread);"
                + " the benchmark wraps the acker's Lettuce command interface and notes when each ack's reply"
                + " arrives on Lettuce's event loop (measurement only, nothing sent changes). The Lettuce loop's"
                + " asynchronous XACK and Redisson's `ackAsync` are stamped in their reply's callback, Spring's"
                + " template by a command listener on its Lettuce client, and naive Jedis, which reads the socket on"
                + " the calling thread, when its call returns.");
        md.line("- Runs are timed from the start of `submit` until Redis confirmed the XACK of the run's trigger (the"
                + " worker acks only after replies + done are committed): the benchmark joins the submit times, the"
                + " run each handler call executed, the trigger entry of each run (a plain XREAD of the trigger"
                + " stream) and the observed acks. Each runs measurement uses its own PostgreSQL schema, dropped"
                + " afterwards.");
        md.line("- The recovery scenario's victim is a child JVM killed with SIGKILL (`Process.destroyForcibly`).");
        md.line("- The cluster and hung-master scenarios start Redis servers of their own (`redis-server` on the PATH, or"
                + " `$RUNBUS_BENCH_REDIS_SERVER`) on free loopback ports, and stop them when they end.");
        md.line("- Flags: `--quick`, `--scenarios " + String.join(",", BenchOptions.ALL_SCENARIOS) + "`,"
                + " `--repeats N`, `--seed N` (the order of the contenders in each round), `--redis URI`,"
                + " `--database JDBC-URL`, `--out FILE`, `--jfr DIR` (a Flight Recorder file per scenario),"
                + " `--report-from FILE` (write the report again from saved results), passed as"
                + " `-Dexec.args=\"...\"`.");
        md.line();
    }
}
