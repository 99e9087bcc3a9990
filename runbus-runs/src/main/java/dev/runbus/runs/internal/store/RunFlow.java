package dev.runbus.runs.internal.store;

import dev.runbus.Message;
import dev.runbus.runs.NewRun;

/**
 * What of a run its trigger carries for flow control: the flow key ({@code null}: none, and then nothing else), the
 * priority among the key's waiting runs and the flow sub-key ({@code null}: none). Stored with the run
 * ({@code runs.flow_key}, {@code priority}, {@code flow_sub_key}), so that every trigger published again carries it
 * too: the sweeper's, a replay's.
 */
public record RunFlow(String key, int priority, String subKey) {

    /** No flow key: what a trigger carries when the workers run no flow control. */
    public static final RunFlow NONE = new RunFlow(null, Message.DEFAULT_PRIORITY, null);

    public static RunFlow of(NewRun run) {
        return new RunFlow(run.flowKey(), run.priority(), run.flowSubKey());
    }

    /**
     * This, or {@link #NONE} when the workers run no flow control: their triggers then carry no flow key
     * ({@link dev.runbus.runs.RunsConfig#triggerFlowKey}), so a run with one is run as it comes.
     */
    public RunFlow onlyIf(boolean flowControlled) {
        return flowControlled && key != null ? this : NONE;
    }
}
