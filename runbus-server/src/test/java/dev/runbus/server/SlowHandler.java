package dev.runbus.server;

import dev.runbus.runs.Reply;
import dev.runbus.runs.RunContext;
import dev.runbus.runs.RunHandler;
import java.util.List;

/** A handler for the SIGTERM test: each run takes 100 ms, so some are always in flight. */
public final class SlowHandler implements RunHandler {
    @Override
    public List<Reply> execute(RunContext run) throws InterruptedException {
        Thread.sleep(100);
        return List.of(Reply.assistant("slow:" + run.input()), Reply.assistant("done"));
    }
}
