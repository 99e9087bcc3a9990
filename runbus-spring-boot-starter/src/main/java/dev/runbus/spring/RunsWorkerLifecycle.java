package dev.runbus.spring;

import dev.runbus.Subscription;
import dev.runbus.runs.RunHandler;
import dev.runbus.runs.Runs;
import java.util.function.Supplier;
import org.springframework.context.SmartLifecycle;

/**
 * Starts the runs worker with the application's {@link RunHandler} (and the sweeper and the scheduler of the recurring
 * schedules, unless turned off) once the context is refreshed, and stops the worker gracefully in the listeners' phase:
 * running runs finish and their triggers are acknowledged. The sweeper and the scheduler stop when the {@link Runs}
 * bean is closed.
 */
public class RunsWorkerLifecycle implements SmartLifecycle {

    private final Runs runs;
    private final Supplier<RunHandler> handler;
    private final boolean sweeper;
    private final boolean scheduler;
    private Subscription worker;

    RunsWorkerLifecycle(Runs runs, Supplier<RunHandler> handler, boolean sweeper, boolean scheduler) {
        this.runs = runs;
        this.handler = handler;
        this.sweeper = sweeper;
        this.scheduler = scheduler;
    }

    @Override
    public synchronized void start() {
        worker = runs.startWorker(handler.get());
        if (sweeper) {
            runs.startSweeper();
        }
        if (scheduler) {
            runs.schedules().startScheduler();
        }
    }

    @Override
    public void stop(Runnable callback) {
        BackgroundStop.run("runbus-runs-stop", this::stop, callback);
    }

    @Override
    public synchronized void stop() {
        if (worker != null) {
            worker.close();
            worker = null;
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return worker != null;
    }

    @Override
    public int getPhase() {
        return RunbusListenerContainer.PHASE;
    }
}
