package dev.runbus.server;

import dev.runbus.runs.Reply;
import dev.runbus.runs.RunContext;
import dev.runbus.runs.RunHandler;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * For the dashboard's tests: fails every attempt of an input containing "gated" while the gate is shut, so that
 * such a run ends in a dead letter; once a test opens the gate, a replay of it completes. Other inputs are echoed.
 */
public final class GatedHandler implements RunHandler {

    static final AtomicBoolean OPEN = new AtomicBoolean();

    @Override
    public List<Reply> execute(RunContext run) {
        if (run.input().contains("gated") && !OPEN.get()) {
            throw new IllegalStateException("the gate is shut for " + run.input());
        }
        return List.of(Reply.assistant("handled " + run.input()));
    }
}
