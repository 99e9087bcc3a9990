package dev.runbus.examples;

import dev.runbus.runs.Reply;
import dev.runbus.runs.RunContext;
import dev.runbus.runs.RunHandler;
import java.util.List;
import java.util.Locale;

/**
 * A deployment's own handler for {@code runbus serve} and {@code runbus worker}: public, with a public
 * no-argument constructor. Given with {@code --handler dev.runbus.examples.ShoutHandler --handler-path <its jar or
 * classes folder>} (docs/cli.md, "Your own handler"), it answers each run with its input in capitals.
 */
public final class ShoutHandler implements RunHandler {

    @Override
    public List<Reply> execute(RunContext run) {
        return List.of(Reply.assistant(run.input().toUpperCase(Locale.ROOT)));
    }
}
