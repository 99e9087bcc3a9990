package dev.runbus.server;

import dev.runbus.runs.Reply;
import dev.runbus.runs.RunContext;
import dev.runbus.runs.RunHandler;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A handler for the SIGTERM tests: each run takes 100 ms, so some are always in flight. When the environment
 * variable {@value #GATE_VARIABLE} names a file, a run first waits until that file exists: a test can then
 * submit all its runs before any of them ends, however fast or slow the machine.
 */
public final class SlowHandler implements RunHandler {

    static final String GATE_VARIABLE = "RUNBUS_TEST_GATE";
    private static final String GATE = System.getenv(GATE_VARIABLE);

    @Override
    public List<Reply> execute(RunContext run) throws InterruptedException {
        while (GATE != null && !Files.exists(Path.of(GATE))) {
            Thread.sleep(10); // polls the test's gate file: a condition, checked every 10 ms
        }
        Thread.sleep(100);
        return List.of(Reply.assistant("slow:" + run.input()), Reply.assistant("done"));
    }
}
