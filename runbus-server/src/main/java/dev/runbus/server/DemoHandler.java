package dev.runbus.server;

import dev.runbus.runs.Reply;
import dev.runbus.runs.RunContext;
import dev.runbus.runs.RunHandler;
import java.util.List;

/**
 * The handler of {@code runbus demo} and, by default, {@code runbus serve}: answers with two replies, fails
 * every attempt on an input containing "poison" (so the run ends failed), and fails the first attempt of an
 * input containing "flaky" (so the run succeeds on its redelivery).
 */
public final class DemoHandler implements RunHandler {

    @Override
    public List<Reply> execute(RunContext run) {
        String input = run.input();
        if (input.contains("poison")) {
            throw new IllegalArgumentException("cannot process a poison input");
        }
        if (input.contains("flaky") && run.attempt() == 1) {
            throw new IllegalStateException("upstream timed out (first attempt of a flaky input)");
        }
        return List.of(Reply.assistant("You said: " + input),
                new Reply("system", "run " + run.runId() + ", attempt " + run.attempt()));
    }
}
