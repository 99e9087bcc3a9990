package dev.runbus.bench;

import java.util.Locale;

/** Section 4: the time to take over a killed consumer's in-flight entries. */
final class RecoverySection {

    private final Markdown md;

    RecoverySection(Markdown md) {
        this.md = md;
    }

    void write(RecoveryScenario.Result x) {
        md.line("## 4. Recovery");
        md.line();
        md.line(String.format(Locale.ROOT, "A consumer in a JVM of its own holds %,d in-flight entries (read, handler"
                + " stuck, claims kept alive) and is killed with SIGKILL; a live consumer of the same group (minIdle"
                + " %d ms, claim interval %d ms) takes them over. The kill falls at a random moment of the victim's"
                + " keep-alive cycle (every %d ms): 0–%d ms later than it would otherwise, drawn anew each round."
                + " Time from the kill until all %,d are acknowledged:", x.inFlight(), x.minIdleMillis(),
                x.claimIntervalMillis(), x.keepAliveMillis(), x.keepAliveMillis(), x.inFlight()));
        md.line();
        double bound = (x.minIdleMillis() + x.claimIntervalMillis()) / 1000.0;
        md.line("| | seconds |");
        md.line("|---|---:|");
        md.line("| **time to recover all " + x.inFlight() + "** | **" + Fmt.summary(Stats.of(x.seconds()), Fmt::seconds)
                + "** |");
        md.line("| minIdle + claim interval | " + Fmt.seconds(bound) + " |");
        md.line("| the kill's phase in the keep-alive interval, ms | "
                + Fmt.summary(Stats.of(x.killPhaseMillis()), v -> String.format(Locale.ROOT, "%.0f", v)) + " |");
        if (!x.olderPathSeconds().isEmpty()) {
            md.line("| the same on the Redis 8.0 path (`runbus.redis.commandsUpTo=8.0`, victim and survivor) | "
                    + Fmt.summary(Stats.of(x.olderPathSeconds()), Fmt::seconds) + " |");
            md.line("| the server's own path ÷ the 8.0 path, per round | "
                    + Fmt.summary(Stats.pairedRatio(x.seconds(), x.olderPathSeconds()), Fmt::ratio) + " |");
        }
        md.line("| target: minIdle + 2 × claim interval | "
                + Fmt.seconds((x.minIdleMillis() + 2 * x.claimIntervalMillis()) / 1000.0) + " |");
        md.line();
        md.line("Round by round, phase → time to recover: " + rounds(x) + ". An entry becomes claimable `minIdle`"
                + " after the dead consumer's last keep-alive (up to one keep-alive interval, a third of `minIdle`,"
                + " before the kill), and the survivor's reclaimer looks every claim interval; so the range of the"
                + " rounds, not one figure, is the result.");
        md.line();
    }

    private static String rounds(RecoveryScenario.Result x) {
        java.util.List<String> out = new java.util.ArrayList<>();
        for (int i = 0; i < x.seconds().size(); i++) {
            double phase = i < x.killPhaseMillis().size() ? x.killPhaseMillis().get(i) : Double.NaN;
            String older = i < x.olderPathSeconds().size()
                    ? " (8.0 path " + Fmt.seconds(x.olderPathSeconds().get(i)) + ")" : "";
            out.add(String.format(Locale.ROOT, "%.0f ms → %s%s", phase, Fmt.seconds(x.seconds().get(i)), older));
        }
        return out.isEmpty() ? "—" : String.join(", ", out);
    }
}
