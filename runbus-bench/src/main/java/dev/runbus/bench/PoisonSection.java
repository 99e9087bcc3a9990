package dev.runbus.bench;

import java.util.Locale;

/** Section 5: what poison messages cost the drain. */
final class PoisonSection {

    private final Markdown md;

    PoisonSection(Markdown md) {
        this.md = md;
    }

    void write(PoisonScenario.Result x) {
        md.line("## 5. Poison messages");
        md.line();
        md.line(String.format(Locale.ROOT, "The drain of scenario 1 through runbus, C = %d, %,d messages, without poison"
                + " and with every %dth message poison (the handler throws). *Dead-lettered at once*: maxDeliveries 1,"
                + " so each poison message goes through the failure and the dead-letter script (copy + XACK in one"
                + " script) inside the window, which ends when every entry is acknowledged. *Left for a retry*:"
                + " maxDeliveries 3 (the default), a failed message stays pending for a later delivery; the window"
                + " ends when every clean message is acknowledged and every poison message failed once. The same"
                + " handler runs in all three. The cost sought is smaller than the machine's drift, so this"
                + " scenario takes %d rounds (%d per repeat), each figure the median of them.", x.consumers(),
                x.messages(), x.poisonEvery(), x.clean().size(), PoisonScenario.PAIRS_PER_REPEAT));
        md.line();
        md.line("| msg/s | median (min–max) | ÷ no poison, per round | cost |");
        md.line("|---|---:|---:|---:|");
        md.line("| no poison | " + Fmt.summary(Stats.of(x.clean()), Fmt::rate) + " | | |");
        String pct = (100.0 / x.poisonEvery()) + "% poison";
        Stats.Summary dl = Stats.pairedRatio(x.deadLettered(), x.clean());
        Stats.Summary rt = Stats.pairedRatio(x.retried(), x.clean());
        md.line("| " + pct + ", dead-lettered at once | " + Fmt.summary(Stats.of(x.deadLettered()), Fmt::rate) + " | "
                + Fmt.summary(dl, Fmt::ratio) + " | **" + Fmt.percent(1 - dl.median()) + "** |");
        md.line("| " + pct + ", left for a retry | " + Fmt.summary(Stats.of(x.retried()), Fmt::rate) + " | "
                + Fmt.summary(rt, Fmt::ratio) + " | **" + Fmt.percent(1 - rt.median()) + "** |");
        md.line();
    }
}
