package dev.runbus.server;

import dev.runbus.runs.Reply;
import dev.runbus.runs.RunContext;
import dev.runbus.runs.RunHandler;
import java.util.List;

/** Fails every attempt with a long message full of control characters, as a careless handler might. */
public final class NoisyFailureHandler implements RunHandler {

    static final String NOISE = "\u001b]0;owned\u0007\u001b[2J\u0000\r\nsecond line\t" + "y".repeat(50_000);

    @Override
    public List<Reply> execute(RunContext run) {
        throw new IllegalStateException(NOISE);
    }
}
