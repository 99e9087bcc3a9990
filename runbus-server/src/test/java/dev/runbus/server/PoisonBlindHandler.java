package dev.runbus.server;

import dev.runbus.runs.Reply;
import dev.runbus.runs.RunContext;
import dev.runbus.runs.RunHandler;
import java.util.List;

/** A handler that answers every input, poison included: a demo run with it does not end as planned. */
public final class PoisonBlindHandler implements RunHandler {
    @Override
    public List<Reply> execute(RunContext run) {
        return List.of(Reply.assistant("answered: " + run.input()), Reply.assistant("done"));
    }
}
