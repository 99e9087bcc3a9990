package dev.runbus.server.cli;

import dev.runbus.runs.Runs;
import dev.runbus.server.Infrastructure;
import dev.runbus.server.RunbusServer;
import dev.runbus.server.RunsFactory;
import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

@Command(name = "worker", mixinStandardHelpOptions = true,
        description = {"Run a worker and the sweeper, without HTTP, until stopped: add machines to a serve.",
                "Needs --redis-url and --database-url. SIGTERM or Ctrl-C stops gracefully (running handlers "
                        + "finish, acks are flushed, then the sweeper stops); exit code 0."})
final class WorkerCommand extends BaseCommand {

    @Mixin
    WorkerOptions worker;

    @Override
    void collectMore(Map<Setting, String> flags) {
        worker.collect(flags);
    }

    @Override
    public Integer call() throws InterruptedException {
        Settings s = settings();
        s.validate();
        RunbusServer.checkHandler(s);
        var handler = RunsFactory.handler(s);
        try (GracefulStop stop = GracefulStop.install(s.duration(Setting.SHUTDOWN_TIMEOUT).plusSeconds(60))) {
            Infrastructure infra = Infrastructure.start(s, true, false, null, RunsFactory.poolSize(s, 1),
                    out());
            Runs runs;
            try {
                runs = RunsFactory.create(infra, s, null, "worker");
                runs.startWorker(handler);
                runs.startSweeper();
                runs.schedules().startScheduler(); // one process fires at a time: the lease's holder
            } catch (RuntimeException e) {
                infra.close();
                throw e;
            }
            out().println("runbus worker " + runs.config().consumer() + " ready (group " + runs.config().group()
                    + " of topic " + runs.config().topic() + ")");
            out().flush();
            String why = stop.await();
            err().println("runbus: " + why + ", stopping gracefully");
            err().flush();
            try {
                runs.close();
            } finally {
                infra.close();
            }
        }
        return 0;
    }
}
