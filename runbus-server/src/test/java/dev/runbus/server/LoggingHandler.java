package dev.runbus.server;

import dev.runbus.runs.Reply;
import dev.runbus.runs.RunContext;
import dev.runbus.runs.RunHandler;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A handler for the JSON log test: it logs one line per run, at info, as a deployment's handler would. */
public final class LoggingHandler implements RunHandler {

    private static final Logger log = LoggerFactory.getLogger(LoggingHandler.class);

    @Override
    public List<Reply> execute(RunContext run) {
        log.info("handling input {}", run.input());
        return List.of(Reply.assistant("logged"));
    }
}
