package dev.runbus.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The gate's own logic, on threads of the test: deliveries due to run alone take turns without a bound on the wait
 * for the turn; only the wait for the handlers already running is bounded.
 */
class HandlerGateTest {

    private static final long BOUND = TimeUnit.MILLISECONDS.toNanos(100);
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final HandlerGate gate = new HandlerGate();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        threads.shutdownNow();
    }

    /**
     * After a death several entries are often due to run alone at once, the poison among them. Before, each waited for
     * its turn at most the bound: under load the later ones ran beside the poison, their starts were counted again,
     * and good messages were dead-lettered with it (PoisonThatKillsItsProcessTest, with the defaults, once).
     */
    @Test
    void deliveriesDueToRunAloneTakeTurnsHoweverLongTheTurnBeforeLasts() throws Exception {
        assertThat(gate.enterAlone(BOUND, () -> false)).as("the first runs alone").isTrue();
        CompletableFuture<Boolean> second = CompletableFuture.supplyAsync(() -> gate.enterAlone(BOUND, () -> false),
                threads);
        long from = System.nanoTime();
        // The first turn lasts ten times the bound: the second still waits for it.
        Wait.until("ten times the bound passed", WAIT, () -> System.nanoTime() - from > 10 * BOUND);
        assertThat(second).as("the second, waiting for its turn").isNotDone();

        gate.exitAlone();
        assertThat(second.get(WAIT.toSeconds(), TimeUnit.SECONDS)).as("the second runs alone, not beside").isTrue();
        gate.exitAlone();
    }

    @Test
    void aHandlerWaitsWhileOneRunsAlone() throws Exception {
        assertThat(gate.enterAlone(BOUND, () -> false)).isTrue();
        CompletableFuture<Boolean> handler = CompletableFuture.supplyAsync(() -> gate.enter(() -> false), threads);
        long from = System.nanoTime();
        Wait.until("ten times the bound passed", WAIT, () -> System.nanoTime() - from > 10 * BOUND);
        assertThat(handler).as("a handler, waiting while one runs alone").isNotDone();
        gate.exitAlone();
        assertThat(handler.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        gate.exit();
    }

    @Test
    void theWaitForTheHandlersAlreadyRunningIsBounded() throws Exception {
        assertThat(gate.enter(() -> false)).isTrue(); // a handler that does not finish
        Boolean alone = CompletableFuture.supplyAsync(() -> gate.enterAlone(BOUND, () -> false), threads)
                .get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(alone).as("past the bound it runs beside the running handler").isFalse();
        gate.exit();
        gate.exit();
        assertThat(gate.enterAlone(BOUND, () -> false)).as("nobody runs: alone at once").isTrue();
        gate.exitAlone();
    }

    @Test
    void closingEndsTheWaitForTheTurn() throws Exception {
        assertThat(gate.enterAlone(BOUND, () -> false)).isTrue();
        AtomicBoolean closing = new AtomicBoolean();
        CompletableFuture<Boolean> second = CompletableFuture.supplyAsync(() -> gate.enterAlone(BOUND, closing::get),
                threads);
        closing.set(true);
        assertThat(second.get(WAIT.toSeconds(), TimeUnit.SECONDS)).as("took nothing").isNull();
        gate.exitAlone();
        assertThat(gate.enterAlone(BOUND, () -> false)).as("the turn is free").isTrue();
        gate.exitAlone();
    }
}
