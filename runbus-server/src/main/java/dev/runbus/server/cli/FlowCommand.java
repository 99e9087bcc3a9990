package dev.runbus.server.cli;

import dev.runbus.FlowRate;
import dev.runbus.Inspector;
import dev.runbus.server.Infrastructure;
import dev.runbus.server.Settings;
import dev.runbus.server.Table;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "flow", mixinStandardHelpOptions = true,
        description = {"Flow control of a topic (docs/flow-control.md): what waits for a slot and what holds one; one "
                + "flow key's cap, rate or weight, and the topic's cap and rate, live."},
        subcommands = {FlowCommand.Show.class, FlowCommand.Cap.class, FlowCommand.Rate.class, FlowCommand.Weight.class,
                FlowCommand.TopicCap.class, FlowCommand.TopicRate.class})
final class FlowCommand implements Runnable {

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                "missing subcommand: show, cap, rate, weight, topic-cap or topic-rate");
    }

    @Command(name = "show", mixinStandardHelpOptions = true,
            description = "Messages of a topic waiting outside its streams for a slot of their flow key, slots held, "
                    + "and keys only their rate holds back (summed over its partitions).")
    static final class Show extends AdminCommand {
        @Parameters(index = "0", paramLabel = "TOPIC", description = "the topic")
        String topic;

        @Override
        int run(Infrastructure infra, Settings s) {
            Inspector.FlowInfo f = infra.bus().inspector().flow(topic);
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("topic", topic);
            out.put("waiting", f.parked());
            out.put("slots_held", f.held());
            out.put("keys_throttled", f.throttled());
            Table t = new Table("field", "value");
            out.forEach(t::row);
            print(t, out);
            return 0;
        }
    }

    @Command(name = "cap", mixinStandardHelpOptions = true,
            description = "Set one flow key's cap in place of the group's flowCap (raised: its waiting messages start "
                    + "at once; lowered: none starts until fewer run), or give it the group's again with --clear.")
    static final class Cap extends AdminCommand {
        @Mixin
        TopicAndKey at;

        @Parameters(index = "2", paramLabel = "N", arity = "0..1",
                description = "the key's cap, 0 or more (0 holds the key back)")
        Integer cap;

        @Option(names = "--clear", description = "give the key the group's flowCap again")
        boolean clear;

        @Override
        int run(Infrastructure infra, Settings s) {
            if (clear == (cap != null)) {
                throw new IllegalArgumentException("give the key's cap N, or --clear (one of the two)");
            }
            int admitted = clear ? infra.bus().clearFlowCap(at.topic, at.key)
                    : infra.bus().setFlowCap(at.topic, at.key, cap);
            return changed(this, at, "cap", clear ? "the group's" : cap, admitted);
        }
    }

    @Command(name = "rate", mixinStandardHelpOptions = true,
            description = "Set one flow key's rate in place of the group's flowRate (the key starts afresh: up to its "
                    + "burst at once), or give it the group's again with --clear.")
    static final class Rate extends AdminCommand {
        @Mixin
        TopicAndKey at;

        @Parameters(index = "2", paramLabel = "PERMITS", arity = "0..1",
                description = "messages of the key let in per --per, 1 or more")
        Integer permits;

        @Mixin
        RateOptions every;

        @Option(names = "--clear", description = "give the key the group's flowRate again")
        boolean clear;

        @Override
        int run(Infrastructure infra, Settings s) {
            if (clear == (permits != null)) {
                throw new IllegalArgumentException("give the key's rate PERMITS, or --clear (one of the two)");
            }
            if (clear) {
                return changed(this, at, "rate", "the group's", infra.bus().clearFlowRate(at.topic, at.key));
            }
            return changed(this, at, "rate", every.describe(permits),
                    infra.bus().setFlowRate(at.topic, at.key, every.rate(permits)));
        }
    }

    @Command(name = "weight", mixinStandardHelpOptions = true,
            description = "Set one flow key's weight under the topic's cap (its share of the topic's slots against the "
                    + "other waiting keys'; default 1), or give it 1 again with --clear.")
    static final class Weight extends AdminCommand {
        @Mixin
        TopicAndKey at;

        @Parameters(index = "2", paramLabel = "W", arity = "0..1",
                description = "the key's weight, from 0.000001 to 1000000 (2: twice the share of weight 1)")
        Double weight;

        @Option(names = "--clear", description = "give the key the weight 1 again")
        boolean clear;

        @Override
        int run(Infrastructure infra, Settings s) {
            if (clear == (weight != null)) {
                throw new IllegalArgumentException("give the key's weight W, or --clear (one of the two)");
            }
            int admitted = clear ? infra.bus().clearFlowWeight(at.topic, at.key)
                    : infra.bus().setFlowWeight(at.topic, at.key, weight);
            return changed(this, at.topic, at.key, "weight", clear ? 1.0 : weight, admitted);
        }
    }

    @Command(name = "topic-cap", mixinStandardHelpOptions = true,
            description = "Set the cap of the whole topic in place of the group's flowTopicCap (raised: waiting "
                    + "messages start at once, in their turns; lowered: none starts until fewer run), or give it the "
                    + "group's again with --clear. An unpartitioned topic only.")
    static final class TopicCap extends AdminCommand {
        @Parameters(index = "0", paramLabel = "TOPIC", description = "the topic")
        String topic;

        @Parameters(index = "1", paramLabel = "N", arity = "0..1", description = "the topic's cap, 0 or more")
        Integer cap;

        @Option(names = "--clear", description = "give the topic the group's flowTopicCap again")
        boolean clear;

        @Override
        int run(Infrastructure infra, Settings s) {
            if (clear == (cap != null)) {
                throw new IllegalArgumentException("give the topic's cap N, or --clear (one of the two)");
            }
            int admitted = clear ? infra.bus().clearFlowTopicCap(topic) : infra.bus().setFlowTopicCap(topic, cap);
            return changed(this, topic, null, "topic_cap", clear ? "the group's" : cap, admitted);
        }
    }

    @Command(name = "topic-rate", mixinStandardHelpOptions = true,
            description = "Set the rate of the whole topic in place of the group's flowTopicRate (the topic starts "
                    + "afresh: up to its burst at once), or give it the group's again with --clear. An unpartitioned "
                    + "topic only.")
    static final class TopicRate extends AdminCommand {
        @Parameters(index = "0", paramLabel = "TOPIC", description = "the topic")
        String topic;

        @Parameters(index = "1", paramLabel = "PERMITS", arity = "0..1",
                description = "messages of the topic let in per --per, 1 or more")
        Integer permits;

        @Mixin
        RateOptions every;

        @Option(names = "--clear", description = "give the topic the group's flowTopicRate again")
        boolean clear;

        @Override
        int run(Infrastructure infra, Settings s) {
            if (clear == (permits != null)) {
                throw new IllegalArgumentException("give the topic's rate PERMITS, or --clear (one of the two)");
            }
            if (clear) {
                return changed(this, topic, null, "topic_rate", "the group's", infra.bus().clearFlowTopicRate(topic));
            }
            return changed(this, topic, null, "topic_rate", every.describe(permits),
                    infra.bus().setFlowTopicRate(topic, every.rate(permits)));
        }
    }

    /** The period and burst of a rate of {@code rate} and {@code topic-rate}, whose PERMITS come first. */
    static final class RateOptions {
        @Option(names = "--per", paramLabel = "DURATION", defaultValue = "1s", converter = DurationConverter.class,
                description = "the period of PERMITS (e.g. 1s, 1m); default ${DEFAULT-VALUE}")
        Duration per;

        @Option(names = "--burst", paramLabel = "N", defaultValue = "1",
                description = "messages let in at once after an idle time; default ${DEFAULT-VALUE}")
        int burst;

        FlowRate rate(int permits) {
            return new FlowRate(permits, per, burst);
        }

        String describe(int permits) {
            return permits + " per " + per + ", burst " + burst;
        }
    }

    /** The topic and flow key a change is for: the first two arguments of {@code cap}, {@code rate} and {@code weight}. */
    static final class TopicAndKey {
        @Parameters(index = "0", paramLabel = "TOPIC", description = "the topic")
        String topic;

        @Parameters(index = "1", paramLabel = "KEY", description = "the flow key, for example a tenant's id")
        String key;
    }

    /** A duration as the settings write it: 500ms, 1s, 2m, 1h. */
    static final class DurationConverter implements picocli.CommandLine.ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            return Settings.parseDuration(value);
        }
    }

    private static int changed(AdminCommand command, TopicAndKey at, String what, Object value, int admitted) {
        return changed(command, at.topic, at.key, what, value, admitted);
    }

    /** Prints what a change did: the key (none for the topic's cap), its new value, the messages it let in. */
    private static int changed(AdminCommand command, String topic, String key, String what, Object value,
                               int admitted) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("topic", topic);
        if (key != null) {
            out.put("flow_key", key);
        }
        out.put(what, value);
        out.put("let_in", admitted);
        Table t = new Table("field", "value");
        out.forEach(t::row);
        command.print(t, out);
        return 0;
    }
}
