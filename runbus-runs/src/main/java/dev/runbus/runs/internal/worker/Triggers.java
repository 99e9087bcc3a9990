package dev.runbus.runs.internal.worker;

import dev.runbus.Message;
import dev.runbus.runs.internal.store.RunFlow;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The stream message that triggers a run: type {@value #TYPE}, id and payload both the run id. It carries
 * nothing else: the run itself is in PostgreSQL. Runs in per-user order publish their triggers with the user id
 * as the message key, so that one user's triggers share a partition.
 */
public final class Triggers {

    public static final String TYPE = "runbus.run";

    private Triggers() {
    }

    public static Message of(UUID runId) {
        return of(runId, null, Map.of());
    }

    /**
     * A trigger with a message key: the user id for ordered runs; {@code null} for none (unordered runs, whose
     * triggers are spread over the partitions).
     */
    public static Message of(UUID runId, String key) {
        return of(runId, key, Map.of());
    }

    /**
     * A trigger with a message key (or null) and headers: the trace context of the run's submission, so that the
     * run's execution joins its submitter's trace.
     */
    public static Message of(UUID runId, String key, Map<String, String> headers) {
        return of(runId, key, headers, RunFlow.NONE);
    }

    /**
     * A trigger with a message key (or null), headers and the run's flow key (or null): a worker with flow control
     * runs the runs of one flow key within its caps and rates (docs/flow-control.md).
     */
    public static Message of(UUID runId, String key, Map<String, String> headers, String flowKey) {
        return of(runId, key, headers, new RunFlow(flowKey, Message.DEFAULT_PRIORITY, null));
    }

    /**
     * {@link #of(UUID, String, Map, String)} with all of the run's {@link RunFlow}: its priority and sub-key, which a
     * trigger without a flow key does not carry.
     */
    public static Message of(UUID runId, String key, Map<String, String> headers, RunFlow flow) {
        String id = runId.toString();
        Message.Builder b = Message.builder(TYPE, id.getBytes(StandardCharsets.UTF_8)).id(id).headers(headers);
        if (flow.key() != null) {
            b.flowKey(flow.key()).priority(flow.priority());
            if (flow.subKey() != null) {
                b.flowSubKey(flow.subKey());
            }
        }
        Message m = b.build();
        return key == null ? m : m.withKey(key);
    }

    /** The run id of a trigger, or empty when the message is not one. */
    public static Optional<UUID> runIdOf(Message m) {
        try {
            return Optional.of(UUID.fromString(m.id()));
        } catch (IllegalArgumentException notARun) {
            return Optional.empty();
        }
    }
}
